"""A provider's key never shows anywhere (answers, pages, admin, logs, errors), and its name, which its
models' handles start with, does not change once saved (as in Letta, whose ``PATCH`` takes no name)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest
from django.urls import reverse

from agents import services
from providers.models import Provider
from tests.factories import UserFactory
from tests.fake_llm.listings import ListingFault
from tests.fake_llm.script import Fault
from tests.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY

if TYPE_CHECKING:
    from django.test import Client
    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db

KEYS = (OPENAI_KEY, ANTHROPIC_KEY)


def _change_page(provider: Provider) -> str:
    return reverse("admin:providers_provider_change", args=[provider.pk])


def test_the_key_never_shows_in_answers_pages_admin_logs_or_errors(
    alice_api: APIClient,
    client: Client,
    cast: Cast,
    org_providers: OrgProviders,
    fake_llm: FakeLLMServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    agent = services.agent_create(organization=cast.org_a, name="refused", model="my-claude/claude-sonnet-4-6")
    fake_llm.script(Fault.http(401, "invalid x-api-key"))
    fake_llm.fail_listings("anthropic", ListingFault("401"))
    fake_llm.fail_listings("openai", ListingFault("timeout", stall=1.0))
    shown = [
        alice_api.post(f"/v1/agents/{agent.public_id}/messages", {"input": "hello"}, format="json"),
        alice_api.patch(f"/v1/providers/{org_providers.anthropic.public_id}/refresh"),
        alice_api.patch(f"/v1/providers/{org_providers.openai.public_id}/refresh"),
        alice_api.post(f"/v1/providers/{org_providers.anthropic.public_id}/check"),
        alice_api.post(
            "/v1/providers/check",
            {"provider_type": "anthropic", "api_key": ANTHROPIC_KEY, "base_url": fake_llm.base_url_anthropic},
            format="json",
        ),
        alice_api.get("/v1/providers"),
        alice_api.get("/v1/models/"),
    ]
    client.force_login(cast.alice)
    shown.append(client.get(reverse("providers:list")))
    shown.append(client.post(reverse("providers:check", args=[org_providers.anthropic.public_id]), follow=True))
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    shown.append(client.get(reverse("admin:providers_provider_changelist")))
    shown.extend(client.get(_change_page(provider)) for provider in vars(org_providers).values())

    assert [answer.status_code for answer in shown[3:5]] == [401, 401]
    assert all(answer.status_code < 500 for answer in shown)
    texts = [answer.content.decode() for answer in shown]
    for key in KEYS:
        assert not [text for text in texts if key in text]
        assert key not in caplog.text
    assert "refused the credentials" in texts[3]
    assert any(key in request.headers.get("authorization", "") for request in fake_llm.requests for key in KEYS)


def test_a_saved_providers_name_and_type_stay_so_its_agents_handles_keep_naming_it(
    client: Client, alice_api: APIClient, cast: Cast, org_providers: OrgProviders
) -> None:
    agent = services.agent_create(organization=cast.org_a, name="on-claude", model="my-claude/claude-sonnet-4-6")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get(_change_page(org_providers.anthropic))

    client.post(
        _change_page(org_providers.anthropic),
        {
            "name": "renamed",
            "provider_type": "openai",
            "api_key": "",
            "base_url": org_providers.anthropic.base_url,
            "models-TOTAL_FORMS": "0",
            "models-INITIAL_FORMS": "0",
        },
    )

    assert {"name", "provider_type"}.isdisjoint(page.context["adminform"].form.fields)
    provider = Provider.objects.get(pk=org_providers.anthropic.pk)
    assert (provider.name, provider.provider_type, provider.api_key) == ("my-claude", "anthropic", ANTHROPIC_KEY)
    config = alice_api.get(f"/v1/agents/{agent.public_id}").json()["llm_config"]
    assert (config["handle"], config["model_endpoint_type"]) == ("my-claude/claude-sonnet-4-6", "anthropic")


@pytest.mark.parametrize(
    ("name", "error"),
    [("a/b", "no '/'"), ("demo", "conflicts with an existing base provider"), ("my-claude", "already exists")],
)
def test_the_admin_refuses_a_new_provider_name_the_api_would_refuse(
    client: Client, cast: Cast, org_providers: OrgProviders, name: str, error: str
) -> None:
    client.force_login(UserFactory(is_staff=True, is_superuser=True))

    response = client.post(
        reverse("admin:providers_provider_add"),
        {
            "organization": cast.org_a.pk,
            "name": name,
            "provider_type": "openai",
            "api_key": "sk-new",
            "base_url": "",
            "models-TOTAL_FORMS": "0",
            "models-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 200
    assert error in " ".join(response.context["adminform"].form.errors["name"])
    assert Provider.objects.filter(organization=cast.org_a).count() == 3
