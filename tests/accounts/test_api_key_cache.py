"""An API key is looked up once per process, and any change of access stops it on the very next request.

Each test runs on a cache of its own (in memory, and on Redis as production shares the
access generation between processes), so parallel runs never see each other's changes.
"""

from __future__ import annotations

import os
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import api_key_cache
from accounts.models import ApiKey, Membership
from accounts.services import api_key_revoke, membership_remove
from tests.factories import api_key_for

if TYPE_CHECKING:
    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/9"
BACKENDS = {
    "memory": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "redis": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL},
}


@pytest.fixture(params=sorted(BACKENDS), autouse=True)
def own_cache(request: pytest.FixtureRequest, settings: Any) -> None:
    settings.CACHES = {"default": {**BACKENDS[request.param], "KEY_PREFIX": f"key-cache-test-{uuid.uuid4().hex}"}}
    settings.API_KEY_CACHE_SECONDS = 30
    api_key_cache._entries.clear()


def key_client(cast: Cast) -> tuple[APIClient, ApiKey]:
    key, raw = api_key_for(cast.org_a, cast.alice)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client, key


def key_queries(client: APIClient) -> tuple[int, int]:
    """The status of one request and how many of its queries read the API key table."""
    with CaptureQueriesContext(connection) as captured:
        status = client.get("/v1/agents/").status_code
    return status, sum('FROM "accounts_apikey"' in query["sql"] for query in captured.captured_queries)


def test_a_key_is_read_once_then_authenticates_without_a_query(cast: Cast) -> None:
    client, _ = key_client(cast)

    assert [key_queries(client) for _ in range(3)] == [(200, 1), (200, 0), (200, 0)]


def test_without_the_cache_every_request_reads_the_key(cast: Cast, settings: Any) -> None:
    settings.API_KEY_CACHE_SECONDS = 0
    client, _ = key_client(cast)

    assert [key_queries(client) for _ in range(2)] == [(200, 1), (200, 1)]


def test_a_revoked_key_is_refused_on_the_next_request(cast: Cast) -> None:
    client, key = key_client(cast)
    client.get("/v1/agents/")

    api_key_revoke(api_key=key)

    assert client.get("/v1/agents/").status_code == 401


def test_a_creator_removed_from_the_organization_loses_the_key_on_the_next_request(cast: Cast) -> None:
    client, _ = key_client(cast)
    client.get("/v1/agents/")
    owner = Membership.objects.get(user=cast.bob, organization=cast.org_a)
    owner.role = "owner"
    owner.save()

    membership_remove(actor=owner, membership=Membership.objects.get(user=cast.alice, organization=cast.org_a))

    assert client.get("/v1/agents/").status_code == 401


def test_a_deactivated_creator_loses_the_key_on_the_next_request(cast: Cast) -> None:
    client, _ = key_client(cast)
    client.get("/v1/agents/")

    cast.alice.is_active = False
    cast.alice.save()

    assert client.get("/v1/agents/").status_code == 401


def test_a_key_past_its_expiry_is_refused_without_any_event(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    client, key = key_client(cast)
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() + timedelta(hours=1))
    client.get("/v1/agents/")
    later = timezone.now() + timedelta(hours=2)

    monkeypatch.setattr(api_key_cache.timezone, "now", lambda: later)

    assert client.get("/v1/agents/").status_code == 401


def test_a_change_another_process_announced_is_seen_on_the_next_request(cast: Cast) -> None:
    client, key = key_client(cast)
    client.get("/v1/agents/")
    with connection.cursor() as cursor:  # another process's write: this process's signals never see it
        cursor.execute("UPDATE accounts_apikey SET revoked_at = %s WHERE id = %s", [timezone.now(), key.pk])

    still_remembered = client.get("/v1/agents/").status_code
    cache.set(api_key_cache.GENERATION_KEY, uuid.uuid4().hex)  # what that process's forget() shares

    assert (still_remembered, client.get("/v1/agents/").status_code) == (200, 401)


def test_each_request_gets_its_own_copy_of_the_remembered_key(cast: Cast) -> None:
    _, key = key_client(cast)
    loaded = ApiKey.objects.select_related("organization", "created_by").get(pk=key.pk)
    first = api_key_cache.authenticated_key(key.key_hash, lambda: loaded)
    assert first is not None
    first.organization.name = "changed by a request"

    second = api_key_cache.authenticated_key(key.key_hash, lambda: None)

    assert second is not None and second is not first
    assert second.organization.name == cast.org_a.name
