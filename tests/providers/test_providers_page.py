"""The providers page (owners and admins), the agent form's grouped model picker and the chat header's model switch."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.urls import reverse

from agents import services as agent_services
from agents.models import Agent
from providers.models import Provider
from tests.fake_llm.listings import ListingFault
from tests.providers.conftest import OPENAI_KEY

if TYPE_CHECKING:
    from django.test import Client

    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db

LIST = reverse("providers:list")


def test_only_owners_and_admins_see_the_page_and_its_link(client: Client, cast: Cast, no_env_providers) -> None:
    client.force_login(cast.bob)
    member_home = client.get(reverse("agents:list")).content.decode()
    member_page = client.get(LIST)
    client.force_login(cast.alice)
    admin_home = client.get(reverse("agents:list")).content.decode()

    assert member_page.status_code == 403
    assert f'href="{LIST}"' not in member_home
    assert f'href="{LIST}"' in admin_home
    assert client.get(LIST).status_code == 200


def test_adding_a_provider_lists_its_models_with_their_context_windows(
    client: Client, cast: Cast, fake_llm: FakeLLMServer, no_env_providers
) -> None:
    client.force_login(cast.alice)

    response = client.post(
        LIST,
        {
            "name": "lab",
            "provider_type": "openai",
            "base_url": fake_llm.base_url_openai,
            "api_key": OPENAI_KEY,
            "action": "add",
        },
        follow=True,
    )

    page = response.content.decode()
    provider = Provider.objects.get(organization=cast.org_a, name="lab")
    assert provider.api_key == OPENAI_KEY
    assert "Added lab." in page
    assert "lab/gpt-4.1-mini" in page and "1,047,576 tokens" in page
    assert "lab/text-embedding-3-small" in page and "1,536 dimensions" in page
    assert OPENAI_KEY not in page


def test_testing_the_connection_saves_nothing_and_says_why_it_failed(
    client: Client, cast: Cast, fake_llm: FakeLLMServer, no_env_providers
) -> None:
    client.force_login(cast.alice)
    fields = {"name": "lab", "provider_type": "openai", "base_url": fake_llm.base_url_openai, "api_key": "sk-x"}

    works = client.post(LIST, {**fields, "action": "check"}, follow=True).content.decode()
    fake_llm.fail_listings("openai", ListingFault("401"))
    fails = client.post(LIST, {**fields, "action": "check"})

    assert "The connection works" in works
    assert fails.status_code == 400
    assert "The connection failed: The provider refused the credentials (HTTP 401)." in fails.content.decode()
    assert not Provider.objects.exists()


def test_a_private_base_url_is_refused_and_the_page_names_the_setting(
    client: Client, cast: Cast, no_env_providers
) -> None:
    no_env_providers.PROVIDER_ALLOWED_PRIVATE_HOSTS = []
    client.force_login(cast.alice)

    response = client.post(
        LIST, {"name": "lan", "provider_type": "vllm", "base_url": "http://10.0.0.5:8000/v1", "action": "add"}
    )

    assert response.status_code == 400
    assert "PROVIDER_ALLOWED_PRIVATE_HOSTS" in response.content.decode()
    assert not Provider.objects.exists()


def test_an_unavailable_provider_shows_why_and_can_be_refreshed_and_deleted(
    client: Client, cast: Cast, org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    client.force_login(cast.alice)
    fake_llm.fail_listings("ollama", ListingFault("malformed"))
    ollama = org_providers.ollama

    refreshed = client.post(reverse("providers:refresh", args=[ollama.public_id]), follow=True).content.decode()
    client.post(reverse("providers:delete", args=[org_providers.openai.public_id]))

    assert "Unavailable:" in refreshed
    assert "The provider&#x27;s model list is malformed" in refreshed
    assert "my-ollama/llama3.2:latest" in refreshed  # its models stay listed
    assert not Provider.objects.filter(pk=org_providers.openai.pk).exists()


def test_another_organizations_provider_is_a_404_on_every_page_action(
    client: Client, cast: Cast, org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    client.force_login(cast.charlie)
    provider_id = org_providers.openai.public_id
    fake_llm.reset()

    answers = [
        client.post(reverse("providers:check", args=[provider_id])),
        client.post(reverse("providers:refresh", args=[provider_id])),
        client.get(reverse("providers:delete", args=[provider_id])),
        client.post(reverse("providers:delete", args=[provider_id])),
    ]

    assert [answer.status_code for answer in answers] == [404, 404, 404, 404]
    assert Provider.objects.filter(pk=org_providers.openai.pk).exists()
    assert fake_llm.listing_requests == []
    assert "my-openai" not in client.get(LIST).content.decode()


def test_the_agent_form_groups_models_by_provider_with_context_windows(
    client: Client, cast: Cast, org_providers: OrgProviders
) -> None:
    client.force_login(cast.alice)

    form = client.get(reverse("agents:create")).content.decode()

    assert '<optgroup label="my-claude (this organization)">' in form
    assert '<optgroup label="my-ollama (this organization)">' in form
    assert '<optgroup label="Demo (offline)">' in form
    assert "Claude Sonnet 4.6 — my-claude/claude-sonnet-4-6 · 1,000,000 tokens" in form
    assert form.index("my-openai/gpt-4.1-mini") < form.index("demo/echo-1")
    assert "text-embedding-3-small" not in form


def test_the_chat_header_switches_the_model_in_one_step(
    client: Client, cast: Cast, org_providers: OrgProviders
) -> None:
    agent = agent_services.agent_create(organization=cast.org_a, name="switcher", model="demo/echo-1")
    client.force_login(cast.alice)
    chat = reverse("agents:chat", args=[agent.public_id])

    before = client.get(chat).content.decode()
    after = client.post(
        reverse("agents:chat_model", args=[agent.public_id]), {"model": "my-ollama/llama3.2:latest"}, follow=True
    )

    assert 'id="model-switch"' in before and '<option value="my-ollama/llama3.2:latest">' in before
    assert Agent.objects.get(pk=agent.pk).model == "my-ollama/llama3.2:latest"
    assert after.redirect_chain[-1][0] == chat
    assert '<option value="my-ollama/llama3.2:latest" selected>' in after.content.decode()


def test_the_chat_header_refuses_another_organizations_agent_and_an_unknown_provider(
    client: Client, cast: Cast, org_providers: OrgProviders
) -> None:
    agent = agent_services.agent_create(organization=cast.org_a, name="switcher", model="demo/echo-1")
    url = reverse("agents:chat_model", args=[agent.public_id])

    client.force_login(cast.charlie)
    theirs = client.post(url, {"model": "demo/echo-2"})
    client.force_login(cast.alice)
    unknown = client.post(url, {"model": "nowhere/model"}, follow=True)

    assert theirs.status_code == 404
    assert "is not supported" in unknown.content.decode()
    assert Agent.objects.get(pk=agent.pk).model == "demo/echo-1"
