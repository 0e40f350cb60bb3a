"""Issue 14, item 12: API keys and invites do not outlive the access they stand for."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import services
from accounts.models import ApiKey, Invite, Membership
from tests.factories import InviteFactory, UserFactory, api_key_for

if TYPE_CHECKING:
    from tests.conftest import Cast


def _status(raw_key: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    return client.get("/v1/agents/").status_code


def test_an_api_key_stops_working_when_it_expires(cast: Cast):
    key, raw = services.api_key_create(
        organization=cast.org_a, created_by=cast.alice, name="ci", expires_at=timezone.now() + timedelta(hours=1)
    )
    assert _status(raw) == 200
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _status(raw) == 401


def test_an_api_key_stops_working_when_its_creator_leaves_the_organization(cast: Cast):
    _, raw = api_key_for(cast.org_a, cast.bob)
    assert _status(raw) == 200
    bob = Membership.objects.get(user=cast.bob, organization=cast.org_a)
    services.membership_remove(actor=bob, membership=bob)
    assert _status(raw) == 401
    Membership.objects.create(user=cast.bob, organization=cast.org_a)
    assert _status(raw) == 401  # rejoining does not revive it


def test_an_api_key_stops_working_when_its_creator_is_deactivated_or_deleted(cast: Cast):
    _, raw = api_key_for(cast.org_a, cast.bob)
    cast.bob.is_active = False
    cast.bob.save(update_fields=["is_active"])
    assert _status(raw) == 401

    _, alices = api_key_for(cast.org_a, cast.alice)
    cast.alice.delete()
    assert _status(alices) == 401


def test_an_invite_expires_after_seven_days(cast: Cast):
    invite = InviteFactory(organization=cast.org_a, email="newcomer@example.com")
    Invite.objects.filter(pk=invite.pk).update(created_at=timezone.now() - timedelta(days=7, minutes=1))
    invite.refresh_from_db()
    newcomer = UserFactory(email="newcomer@example.com")
    with pytest.raises(services.InviteUnavailable, match="expired"):
        services.invite_accept(invite=invite, user=newcomer)
    assert not Invite.objects.pending().filter(pk=invite.pk).exists()


def test_an_invite_works_only_for_the_invited_email(cast: Cast):
    invite = InviteFactory(organization=cast.org_a, email="Newcomer@Example.com")
    with pytest.raises(services.InviteUnavailable, match="another email"):
        services.invite_accept(invite=invite, user=cast.charlie)
    assert services.invite_accept(invite=invite, user=UserFactory(email="newcomer@example.com")).role == "member"
