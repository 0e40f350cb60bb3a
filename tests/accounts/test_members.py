from __future__ import annotations

import pytest
from django.urls import reverse

from accounts import services
from accounts.models import Membership, Role
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


def role_of(user, organization) -> str:
    return Membership.objects.get(user=user, organization=organization).role


def test_it_lists_the_members_with_their_roles(client, cast):
    client.force_login(cast.bob)

    response = client.get(reverse("accounts:members"))

    content = response.content.decode()
    assert "alice@example.com" in content
    assert "bob@example.com" in content
    assert "charlie@example.com" not in content
    assert "Admin" in content


def test_it_lets_an_admin_change_a_member_role(client, cast):
    client.force_login(cast.alice)
    bob_membership = cast.bob.memberships.get()

    client.post(reverse("accounts:member_role", kwargs={"pk": bob_membership.pk}), {"role": Role.ADMIN})

    assert role_of(cast.bob, cast.org_a) == Role.ADMIN


def test_it_refuses_role_changes_from_a_plain_member(client, cast):
    client.force_login(cast.bob)
    alice_membership = cast.alice.memberships.get()

    response = client.post(reverse("accounts:member_role", kwargs={"pk": alice_membership.pk}), {"role": Role.MEMBER})

    assert response.status_code == 403
    assert role_of(cast.alice, cast.org_a) == Role.ADMIN


def test_it_does_not_let_an_admin_grant_or_touch_the_owner_role(client, cast):
    dora = MembershipFactory(organization=cast.org_a, role=Role.OWNER)
    client.force_login(cast.alice)
    bob_membership = cast.bob.memberships.get()

    client.post(reverse("accounts:member_role", kwargs={"pk": bob_membership.pk}), {"role": Role.OWNER})
    client.post(reverse("accounts:member_role", kwargs={"pk": dora.pk}), {"role": Role.MEMBER})
    client.post(reverse("accounts:member_remove", kwargs={"pk": dora.pk}))

    assert role_of(cast.bob, cast.org_a) == Role.MEMBER
    assert role_of(dora.user, cast.org_a) == Role.OWNER


def test_it_lets_an_owner_make_someone_else_an_owner(client, cast):
    client.force_login(cast.charlie)
    dora = MembershipFactory(organization=cast.org_b, role=Role.MEMBER)

    client.post(reverse("accounts:member_role", kwargs={"pk": dora.pk}), {"role": Role.OWNER})

    assert role_of(dora.user, cast.org_b) == Role.OWNER


def test_it_never_demotes_the_last_owner(cast):
    owner = cast.charlie.memberships.get()

    with pytest.raises(services.LastOwnerError):
        services.membership_set_role(actor=owner, membership=owner, role=Role.ADMIN)

    assert role_of(cast.charlie, cast.org_b) == Role.OWNER


def test_it_demotes_an_owner_when_another_owner_remains(cast):
    owner = cast.charlie.memberships.get()
    MembershipFactory(organization=cast.org_b, role=Role.OWNER)

    services.membership_set_role(actor=owner, membership=owner, role=Role.MEMBER)

    assert role_of(cast.charlie, cast.org_b) == Role.MEMBER


def test_it_never_removes_the_last_owner(client, cast):
    owner = cast.charlie.memberships.get()
    client.force_login(cast.charlie)

    response = client.post(reverse("accounts:member_remove", kwargs={"pk": owner.pk}), follow=True)

    assert b"at least one owner" in response.content
    assert Membership.objects.filter(pk=owner.pk).exists()


def test_it_lets_an_admin_remove_a_member(client, cast):
    client.force_login(cast.alice)

    client.post(reverse("accounts:member_remove", kwargs={"pk": cast.bob.memberships.get().pk}))

    assert not Membership.objects.filter(user=cast.bob).exists()


def test_it_lets_a_member_leave(client, cast):
    client.force_login(cast.bob)

    response = client.post(reverse("accounts:member_remove", kwargs={"pk": cast.bob.memberships.get().pk}))

    assert response.url == reverse("agents:list")
    assert not Membership.objects.filter(user=cast.bob).exists()


def test_it_refuses_a_member_removing_someone_else(client, cast):
    client.force_login(cast.bob)

    client.post(reverse("accounts:member_remove", kwargs={"pk": cast.alice.memberships.get().pk}))

    assert Membership.objects.filter(user=cast.alice, organization=cast.org_a).exists()


def test_it_rejects_other_org(client, cast):
    charlie_membership = cast.charlie.memberships.get()
    client.force_login(cast.alice)

    role = client.post(reverse("accounts:member_role", kwargs={"pk": charlie_membership.pk}), {"role": Role.MEMBER})
    remove = client.post(reverse("accounts:member_remove", kwargs={"pk": charlie_membership.pk}))

    assert (role.status_code, remove.status_code) == (404, 404)
    assert role_of(cast.charlie, cast.org_b) == Role.OWNER
