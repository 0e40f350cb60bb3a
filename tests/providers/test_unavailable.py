"""A model list that asks its stale providers answers 200 however they fail, each marked unavailable with why."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from providers.models import Provider
from tests.fake_llm.listings import ListingFault

if TYPE_CHECKING:
    from pytest_django.fixtures import SettingsWrapper
    from rest_framework.test import APIClient

    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db

# provider → (how its listing fails, the reason the list gives)
FAILURES = {
    "my-openai": (ListingFault("timeout", stall=2.0), "The provider did not answer in time."),
    "my-claude": (ListingFault("401"), "The provider refused the credentials (HTTP 401)."),
    "my-ollama": (
        ListingFault("malformed"),
        "The provider's model list is malformed: no list of models under 'models'.",
    ),
}
PROTOCOLS = {"my-openai": "openai", "my-claude": "anthropic", "my-ollama": "ollama"}


def test_the_model_list_asks_stale_providers_and_answers_200_when_each_fails_its_own_way(
    alice_api: APIClient, org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    for name, (fault, _) in FAILURES.items():
        fake_llm.fail_listings(PROTOCOLS[name], fault)  # type: ignore[arg-type]
    Provider.objects.filter(organization=org_providers.openai.organization).update(checked_at=None)

    started = time.monotonic()
    models = alice_api.get("/v1/models/")
    elapsed = time.monotonic() - started
    providers = alice_api.get("/v1/providers").json()

    assert models.status_code == 200
    items = models.json()
    assert items[-1]["handle"] == "demo/echo-1" and items[-1]["available"] is True
    for item in items[:-1]:
        assert (item["available"], item["unavailable_reason"]) == (False, FAILURES[item["provider_name"]][1])
    assert {item["provider_name"] for item in items[:-1]} == set(FAILURES)
    assert {p["name"]: (p["status"], p["status_reason"]) for p in providers} == {
        name: ("unavailable", reason) for name, (_, reason) in FAILURES.items()
    }
    assert elapsed < 5, "a provider that does not answer holds the list for its read timeout only"


def test_providers_that_all_time_out_hold_the_list_for_one_timeout_not_the_sum(
    alice_api: APIClient, org_providers: OrgProviders, fake_llm: FakeLLMServer, settings: SettingsWrapper
) -> None:
    settings.PROVIDER_DISCOVERY_READ_TIMEOUT = 1.0
    for protocol in ("openai", "anthropic", "ollama"):
        fake_llm.fail_listings(protocol, ListingFault("timeout", stall=4.0))  # type: ignore[arg-type]
    Provider.objects.filter(organization=org_providers.openai.organization).update(checked_at=None)

    started = time.monotonic()
    models = alice_api.get("/v1/models/")
    elapsed = time.monotonic() - started

    assert models.status_code == 200
    assert {item["unavailable_reason"] for item in models.json()[:-1]} == {"The provider did not answer in time."}
    assert elapsed < 2.5, f"three 1 s timeouts took {elapsed:.1f} s"
