from __future__ import annotations

import pytest
from django.urls import reverse

from accounts import services
from accounts.access import SESSION_ORGANIZATION_KEY
from accounts.models import Invite, Membership, Role, User
from tests.accounts.test_signup import sign_up
from tests.factories import InviteFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_it_creates_an_invite_and_shows_its_link_to_the_admin(client, cast):
    client.force_login(cast.alice)

    response = client.post(reverse("accounts:invites"), {"email": "dora@example.com", "role": Role.ADMIN}, follow=True)

    invite = Invite.objects.get()
    assert (invite.organization, invite.email, invite.role, invite.created_by) == (
        cast.org_a,
        "dora@example.com",
        Role.ADMIN,
        cast.alice,
    )
    link = "http://testserver" + reverse("accounts:invite_accept", kwargs={"token": invite.token})
    assert link in response.content.decode()


def test_it_lists_only_pending_invites_of_the_current_organization(client, cast):
    pending = InviteFactory(organization=cast.org_a, email="pending@example.com")
    InviteFactory(
        organization=cast.org_a, email="used@example.com", accepted_by=cast.bob, accepted_at="2024-01-01T00:00Z"
    )
    InviteFactory(organization=cast.org_b, email="globex@example.com")
    client.force_login(cast.alice)

    content = client.get(reverse("accounts:invites")).content.decode()

    assert pending.token in content
    assert "used@example.com" not in content
    assert "globex@example.com" not in content


def test_it_refuses_invites_from_a_plain_member(client, cast):
    client.force_login(cast.bob)

    assert client.get(reverse("accounts:invites")).status_code == 403
    assert client.post(reverse("accounts:invites"), {"role": Role.MEMBER}).status_code == 403
    assert not Invite.objects.exists()


def test_it_does_not_let_an_admin_invite_an_owner(client, cast):
    client.force_login(cast.alice)

    client.post(reverse("accounts:invites"), {"role": Role.OWNER})

    assert not Invite.objects.exists()
    with pytest.raises(services.NotAllowed):
        services.invite_create(actor=cast.alice.memberships.get(), role=Role.OWNER)


def test_it_joins_the_organization_with_the_invite_role(client, cast):
    invite = InviteFactory(organization=cast.org_a, role=Role.ADMIN, email=cast.charlie.email)
    client.force_login(cast.charlie)

    response = client.post(reverse("accounts:invite_accept", kwargs={"token": invite.token}))

    assert response.status_code == 302
    membership = Membership.objects.get(user=cast.charlie, organization=cast.org_a)
    assert membership.role == Role.ADMIN
    invite.refresh_from_db()
    assert invite.accepted_by == cast.charlie
    assert invite.accepted_at is not None
    assert client.session[SESSION_ORGANIZATION_KEY] == str(cast.org_a.pk)


def test_it_asks_for_confirmation_before_joining(client, cast):
    invite = InviteFactory(organization=cast.org_a)
    client.force_login(cast.charlie)

    response = client.get(reverse("accounts:invite_accept", kwargs={"token": invite.token}))

    assert response.status_code == 200
    assert b"Join Acme" in response.content
    assert not Membership.objects.filter(user=cast.charlie, organization=cast.org_a).exists()


def test_it_uses_an_invite_only_once(client, cast):
    invite = InviteFactory(organization=cast.org_a)
    dora = UserFactory(email="dora@example.com")
    client.force_login(cast.charlie)
    client.post(reverse("accounts:invite_accept", kwargs={"token": invite.token}))
    client.force_login(dora)

    response = client.post(reverse("accounts:invite_accept", kwargs={"token": invite.token}))

    assert response.status_code == 410
    assert not Membership.objects.filter(user=dora).exists()
    with pytest.raises(services.InviteUnavailable):
        services.invite_accept(invite=invite, user=dora)


def test_it_keeps_the_invite_when_a_member_opens_it(client, cast):
    invite = InviteFactory(organization=cast.org_a, role=Role.OWNER)
    client.force_login(cast.bob)

    client.post(reverse("accounts:invite_accept", kwargs={"token": invite.token}))

    assert cast.bob.memberships.get().role == Role.MEMBER
    invite.refresh_from_db()
    assert invite.accepted_at is None


def test_it_sends_an_anonymous_visitor_to_log_in_and_back(client, cast):
    invite = InviteFactory(organization=cast.org_a)
    url = reverse("accounts:invite_accept", kwargs={"token": invite.token})

    page = client.get(url).content.decode()
    assert f"{reverse('accounts:login')}?next={url}" in page
    assert f"{reverse('accounts:signup')}?invite={invite.token}" in page
    response = client.post(url)

    assert response.status_code == 302
    assert response.url == f"{reverse('accounts:login')}?next={url}"
    assert not Membership.objects.filter(organization=cast.org_a).exclude(user__in=[cast.alice, cast.bob]).exists()


def test_it_signs_up_through_an_invite_without_creating_an_organization(client, cast):
    invite = InviteFactory(organization=cast.org_a, role=Role.ADMIN, email="dora@example.com")

    response = sign_up(
        client,
        {"email": "dora@example.com", "name": "Dora", "password": "a-long-and-unusual-passphrase"},
        f"?invite={invite.token}",
    )
    assert response.url == reverse("accounts:invite_accept", kwargs={"token": invite.token})
    client.post(response.url)

    dora = User.objects.get(email="dora@example.com")
    assert list(dora.organizations()) == [cast.org_a]
    assert dora.memberships.get().role == Role.ADMIN


def test_it_revokes_a_pending_invite(client, cast):
    invite = InviteFactory(organization=cast.org_a)
    client.force_login(cast.alice)

    client.post(reverse("accounts:invite_revoke", kwargs={"pk": invite.pk}))

    invite.refresh_from_db()
    assert invite.revoked_at is not None
    client.force_login(cast.charlie)
    response = client.post(reverse("accounts:invite_accept", kwargs={"token": invite.token}))
    assert response.status_code == 410
    assert not Membership.objects.filter(user=cast.charlie, organization=cast.org_a).exists()


def test_it_answers_404_for_an_unknown_token(client, cast):
    client.force_login(cast.charlie)

    assert client.get(reverse("accounts:invite_accept", kwargs={"token": "nope"})).status_code == 404


def test_it_rejects_other_org(client, cast):
    invite = InviteFactory(organization=cast.org_b)
    client.force_login(cast.alice)

    response = client.post(reverse("accounts:invite_revoke", kwargs={"pk": invite.pk}))

    assert response.status_code == 404
    invite.refresh_from_db()
    assert invite.revoked_at is None
