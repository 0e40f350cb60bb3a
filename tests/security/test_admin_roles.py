"""Issue 14, item 3: the admin respects organization roles like the pages do."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from accounts.models import ApiKey, Invite, Membership, Role
from providers.models import Provider
from tests.factories import MembershipFactory, UserFactory, api_key_for

if TYPE_CHECKING:
    from tests.conftest import Cast


def _staff(cast: Cast, role: str):
    user = UserFactory(is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label__in=["accounts", "agents", "tools", "providers"])
    )
    membership = MembershipFactory(user=user, organization=cast.org_a, role=role)
    return user, membership


def _change(model: str, pk) -> str:
    return reverse(f"admin:{model.replace('.', '_')}_change", args=[pk])


def test_staff_who_are_only_a_member_administer_nothing_of_their_organization(client, cast: Cast):
    user, mine = _staff(cast, Role.MEMBER)
    key, _ = api_key_for(cast.org_a, cast.alice)
    settings_row = Provider.objects.create(organization=cast.org_a, name="openai", provider_type="openai")
    client.force_login(user)

    promote = client.post(_change("accounts.membership", mine.pk), {"user": user.pk, "role": Role.OWNER})
    client.post(reverse("admin:accounts_apikey_changelist"), {"action": "revoke", "_selected_action": [key.pk]})
    invite = client.post(
        reverse("admin:accounts_invite_add"), {"organization": cast.org_a.pk, "email": "x@example.com", "role": "owner"}
    )

    assert promote.status_code == 404
    assert Membership.objects.get(pk=mine.pk).role == Role.MEMBER
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None
    assert invite.status_code == 200 and not Invite.objects.exists()  # org A is not a choice
    assert client.get(_change("providers.provider", settings_row.pk)).status_code == 404


def test_an_admin_cannot_make_anyone_an_owner_through_the_admin(client, cast: Cast):
    user, mine = _staff(cast, Role.ADMIN)
    client.force_login(user)

    promote = client.post(_change("accounts.membership", mine.pk), {"user": user.pk, "role": Role.OWNER})
    invite = client.post(
        reverse("admin:accounts_invite_add"), {"organization": cast.org_a.pk, "email": "x@example.com", "role": "owner"}
    )

    assert promote.status_code == 403
    assert Membership.objects.get(pk=mine.pk).role == Role.ADMIN
    assert invite.status_code == 403
    assert not Invite.objects.exists()


@pytest.mark.parametrize("as_superuser", [False, True])
def test_the_admin_never_deletes_an_organizations_last_owner(client, cast: Cast, as_superuser: bool):
    owner = MembershipFactory(organization=cast.org_a, role=Role.OWNER)
    if as_superuser:
        client.force_login(UserFactory(is_staff=True, is_superuser=True))
    else:
        client.force_login(_staff(cast, Role.ADMIN)[0])

    response = client.post(reverse("admin:accounts_membership_delete", args=[owner.pk]), {"post": "yes"})

    assert response.status_code == 403
    assert Membership.objects.filter(pk=owner.pk).exists()
