"""Handles → clients, with the organization's providers (and their keys) before the environment's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from accounts.models import Organization
from agents.llm.anthropic import AnthropicClient
from agents.llm.base import LLMBadRequest
from agents.llm.demo import DemoClient
from agents.llm.openai import OpenAIClient
from agents.llm.registry import (
    NO_KEY_PLACEHOLDER,
    ProviderNotConfigured,
    UnknownModelHandle,
    get_llm_client,
    list_model_handles,
    model_info,
)
from agents.llm.retry import RetryingClient
from providers.models import Provider
from tests.factories import OrganizationFactory

if TYPE_CHECKING:
    from pytest_django.fixtures import SettingsWrapper

    from tests.fake_llm.server import FakeLLMServer


@pytest.fixture
def no_env_keys(settings: SettingsWrapper) -> SettingsWrapper:
    settings.ANTHROPIC_API_KEY = ""
    settings.ANTHROPIC_BASE_URL = ""
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = ""
    return settings


def provider_settings(org: Organization, provider: str, *, api_key: str = "", base_url: str = "") -> Provider:
    """The organization's provider named after its type, as ``ProviderSettings`` rows migrate."""
    row = Provider(organization=org, name=provider, provider_type=provider, base_url=base_url)
    row.api_key = api_key
    row.save()
    return row


def test_a_demo_handle_needs_no_key(no_env_keys: SettingsWrapper) -> None:
    client, model = get_llm_client("demo/echo-1", max_attempts=1)

    assert isinstance(client, DemoClient)
    assert model == "echo-1"


@pytest.mark.django_db
def test_the_organization_key_wins_over_the_environment(no_env_keys: SettingsWrapper) -> None:
    no_env_keys.ANTHROPIC_API_KEY = "env-key"
    org = OrganizationFactory()
    provider_settings(org, "anthropic", api_key="org-key")

    client, model = get_llm_client("anthropic/claude-sonnet-4-5-20250929", organization=org, max_attempts=1)

    assert isinstance(client, AnthropicClient)
    assert client.api_key == "org-key"
    assert model == "claude-sonnet-4-5-20250929"


@pytest.mark.django_db
def test_the_environment_key_is_used_when_the_organization_has_none(no_env_keys: SettingsWrapper) -> None:
    no_env_keys.OPENAI_API_KEY = "env-key"
    other_org = OrganizationFactory()
    provider_settings(other_org, "openai", api_key="someone-elses-key")

    client, _ = get_llm_client("openai/gpt-4.1-mini", organization=OrganizationFactory(), max_attempts=1)

    assert isinstance(client, OpenAIClient)
    assert client.api_key == "env-key"
    assert not client.is_compatible_server


@pytest.mark.django_db
def test_the_server_key_is_never_sent_to_a_base_url_the_organization_chose(no_env_keys: SettingsWrapper) -> None:
    no_env_keys.OPENAI_API_KEY = "server-secret"
    org = OrganizationFactory()
    provider_settings(org, "openai", base_url="https://93.184.215.14/v1")

    client, _ = get_llm_client("openai/llama-3", organization=org, max_attempts=1)

    assert isinstance(client, OpenAIClient)
    assert client.api_key == NO_KEY_PLACEHOLDER
    assert client.base_url == "https://93.184.215.14/v1"


@pytest.mark.django_db
def test_an_anthropic_base_url_without_a_key_is_not_configured(no_env_keys: SettingsWrapper) -> None:
    no_env_keys.ANTHROPIC_API_KEY = "server-secret"
    org = OrganizationFactory()
    provider_settings(org, "anthropic", base_url="https://proxy.example")

    with pytest.raises(ProviderNotConfigured, match="No API key for anthropic"):
        get_llm_client("anthropic/claude-haiku-4-5-20251001", organization=org)


def test_a_provider_without_any_key_is_not_configured(no_env_keys: SettingsWrapper) -> None:
    with pytest.raises(ProviderNotConfigured, match="ANTHROPIC_API_KEY"):
        get_llm_client("anthropic/claude-sonnet-4-5-20250929")


@pytest.mark.parametrize("handle", ["mistral/large", "gpt-4.1", "anthropic/", "", "/model"])
def test_an_unknown_handle_is_a_clear_bad_request(handle: str) -> None:
    with pytest.raises(UnknownModelHandle, match="Unknown model handle") as raised:
        get_llm_client(handle)

    assert isinstance(raised.value, LLMBadRequest)


def test_clients_retry_unless_told_not_to(no_env_keys: SettingsWrapper) -> None:
    retrying, _ = get_llm_client("demo/echo-1")
    bare, _ = get_llm_client("demo/echo-1", max_attempts=1)

    assert isinstance(retrying, RetryingClient)
    assert isinstance(retrying.inner, DemoClient)
    assert isinstance(bare, DemoClient)


@pytest.mark.django_db
def test_the_picker_offers_the_demo_always_and_other_models_once_configured(
    no_env_keys: SettingsWrapper, fake_llm: FakeLLMServer
) -> None:
    no_env_keys.PROVIDER_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    org = OrganizationFactory()

    assert [info.handle for info in list_model_handles(organization=org)] == ["demo/echo-1"]

    provider_settings(org, "anthropic", api_key="org-key", base_url=fake_llm.base_url_anthropic)
    offered = list_model_handles(organization=org)

    assert {info.provider for info in offered} == {"demo", "anthropic"}
    demo = offered[-1]
    assert demo.is_demo
    assert "Demo" in demo.display_name
    assert all(info.context_window > 0 for info in offered)


@pytest.mark.django_db
def test_any_demo_handle_reads_as_the_demo_model_and_others_as_their_provider_listed_them(
    no_env_keys: SettingsWrapper, fake_llm: FakeLLMServer
) -> None:
    no_env_keys.PROVIDER_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    org = OrganizationFactory()
    provider_settings(org, "anthropic", api_key="org-key", base_url=fake_llm.base_url_anthropic)
    list_model_handles(organization=org)

    info = model_info("demo/anything")

    assert info is not None
    assert info.is_demo
    assert model_info("anthropic/claude-sonnet-4-6", organization=org) is not None
    assert model_info("anthropic/claude-sonnet-4-5-20250929", organization=org) is None
