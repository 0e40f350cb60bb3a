"""Per-key rate limits: a key over its rate gets Letta-shaped 429s with ``Retry-After``.

The count lives in the default cache, Redis in production (``REDIS_URL``), so every
server process shares it; each test runs on its own cache key prefix, in memory
and on Redis, so parallel runs never count each other's requests.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from accounts.authentication import ApiKeyRateThrottle
from tests.support.api import api_client

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

RATE = 3
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/9"
BACKENDS = {
    "memory": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "redis": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL},
}


@pytest.fixture(params=sorted(BACKENDS))
def tight_rate(request: pytest.FixtureRequest, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``RATE`` requests a minute per key, counted in the given cache under a prefix of this test's own."""
    settings.CACHES = {"default": {**BACKENDS[request.param], "KEY_PREFIX": f"rate-test-{uuid.uuid4().hex}"}}
    # DRF reads the rates into the class when it is first imported.
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": f"{RATE}/minute"})


def spend(client: APIClient, times: int) -> list[int]:
    return [client.get("/v1/agents/").status_code for _ in range(times)]


def test_a_key_over_its_rate_gets_429_with_retry_after(alice_api: APIClient, tight_rate: None) -> None:
    statuses = spend(alice_api, RATE)
    response = alice_api.get("/v1/agents/")

    assert statuses == [200] * RATE
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    assert response.json() == {
        "detail": f"Request was throttled. Expected available in {response['Retry-After']} seconds."
    }


def test_another_key_of_the_same_org_is_counted_separately(cast: Cast, alice_api: APIClient, tight_rate: None) -> None:
    spend(alice_api, RATE + 1)
    bobs_key = api_client(cast.org_a, cast.bob)

    assert spend(bobs_key, RATE) == [200] * RATE
    assert bobs_key.get("/v1/agents/").status_code == 429
    assert alice_api.get("/v1/agents/").status_code == 429


def test_every_operation_counts_against_the_same_key(alice_api: APIClient, tight_rate: None) -> None:
    alice_api.get("/v1/tools/")
    alice_api.get("/v1/runs/")
    alice_api.post("/v1/agents/", {"name": "counted"}, format="json")

    response = alice_api.get("/v1/steps/")

    assert response.status_code == 429


def test_the_health_check_is_never_throttled(alice_api: APIClient, tight_rate: None) -> None:
    spend(alice_api, RATE + 1)

    assert [alice_api.get("/v1/health/").status_code for _ in range(RATE + 1)] == [200] * (RATE + 1)


class Clock:
    """The throttles' clock, set by the test: ``at(window, seconds)`` is that many seconds into a minute."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 0.0
        monkeypatch.setattr(ApiKeyRateThrottle, "timer", staticmethod(lambda: self.now))

    def at(self, window: int, seconds: float) -> None:
        self.now = window * 60.0 + seconds


WINDOW = 29_000_000  # minutes since 1970: one in 2025, far from the real clock


def test_the_last_minutes_requests_weigh_by_how_much_of_that_minute_is_still_within_the_rate(
    alice_api: APIClient, tight_rate: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock(monkeypatch)
    clock.at(WINDOW, 1)
    assert spend(alice_api, RATE) == [200] * RATE

    clock.at(WINDOW + 1, 30)  # half of the previous minute is still within the last 60 s: 1.5 of 3

    assert spend(alice_api, 2) == [200, 429]


def test_a_refused_request_does_not_count_against_the_key(
    alice_api: APIClient, tight_rate: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock(monkeypatch)
    clock.at(WINDOW, 1)
    assert spend(alice_api, RATE + 3) == [200] * RATE + [429] * 3

    clock.at(WINDOW + 1, 40)  # a third of the previous minute left: 1 of its 3 counted requests

    assert spend(alice_api, 3) == [200, 200, 429]
