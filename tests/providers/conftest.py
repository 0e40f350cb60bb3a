"""One organization (Alice's) with an OpenAI, an Ollama and an Anthropic provider, all at the fake LLM server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from providers import services
from tests.support.api import alice_api, charlie_api  # noqa: F401  (the API clients of the standard cast)

if TYPE_CHECKING:
    from pytest_django.fixtures import SettingsWrapper

    from providers.models import Provider
    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer

ENV_PROVIDER_SETTINGS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "AZURE_API_KEY",
    "AZURE_BASE_URL",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "OLLAMA_BASE_URL",
    "VLLM_API_BASE",
    "LMSTUDIO_BASE_URL",
)
OPENAI_KEY = "sk-openai-org-a-secret"
ANTHROPIC_KEY = "sk-ant-org-a-secret"
# The model handles the fake lists for the three providers of ``add_three_providers``, then the demo's, in order.
ALL_LLM_HANDLES = [
    "my-openai/gpt-4.1-mini",
    "my-openai/gpt-4o-mini",
    "my-claude/claude-haiku-4-5-20251001",
    "my-claude/claude-sonnet-4-6",
    "my-ollama/llama3.2:latest",
    "demo/echo-1",
]


def without_env_providers(settings: SettingsWrapper) -> SettingsWrapper:
    """No server provider but the demo; the fake server (on 127.0.0.1) allowed; short discovery timeouts."""
    for name in ENV_PROVIDER_SETTINGS:
        setattr(settings, name, "")
    settings.PROVIDER_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    settings.PROVIDER_DISCOVERY_CONNECT_TIMEOUT = 1.0
    settings.PROVIDER_DISCOVERY_READ_TIMEOUT = 0.5
    return settings


@pytest.fixture
def no_env_providers(settings: SettingsWrapper) -> SettingsWrapper:
    return without_env_providers(settings)


@dataclass
class OrgProviders:
    openai: Provider
    ollama: Provider
    anthropic: Provider


def add_three_providers(cast: Cast, fake_llm: FakeLLMServer) -> OrgProviders:
    return OrgProviders(
        openai=services.provider_create(
            organization=cast.org_a,
            name="my-openai",
            provider_type="openai",
            api_key=OPENAI_KEY,
            base_url=fake_llm.base_url_openai,
        ),
        ollama=services.provider_create(
            organization=cast.org_a, name="my-ollama", provider_type="ollama", base_url=fake_llm.url
        ),
        anthropic=services.provider_create(
            organization=cast.org_a,
            name="my-claude",
            provider_type="anthropic",
            api_key=ANTHROPIC_KEY,
            base_url=fake_llm.base_url_anthropic,
        ),
    )


@pytest.fixture
def org_providers(cast: Cast, fake_llm: FakeLLMServer, no_env_providers: SettingsWrapper) -> OrgProviders:
    return add_three_providers(cast, fake_llm)
