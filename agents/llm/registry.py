"""Model handles (``provider/model``) → a ready client, with keys from the organization or the environment.

Keys and base URLs come from the organization's ``ProviderSettings`` (encrypted at
rest), else from settings (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``,
``OPENAI_API_KEY``, ``OPENAI_BASE_URL``). The server's own key is never sent to a
base URL an organization chose: such an organization must give its own key. Such a URL
must also pass ``core.egress.check_provider_url`` (no private, loopback or
link-local targets unless the operator allows them) before each call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from accounts.models import Provider, ProviderSettings
from agents.llm.anthropic import AnthropicClient
from agents.llm.base import LLMAuthenticationError, LLMBadRequest
from agents.llm.demo import DEFAULT_TOKEN_DELAY, DEMO_LABEL, DemoClient
from agents.llm.openai import OpenAIClient
from agents.llm.retry import DEFAULT_MAX_ATTEMPTS, with_retries
from core.egress import UnsafeProviderURL, check_provider_url

if TYPE_CHECKING:
    from accounts.models import Organization
    from agents.llm.base import LLMClient

__all__ = [
    "CATALOGUE",
    "ModelInfo",
    "ProviderNotConfigured",
    "ProviderURLNotAllowed",
    "UnknownModelHandle",
    "get_llm_client",
    "list_model_handles",
    "model_info",
    "parse_handle",
    "with_retries",
]

DEMO = "demo"
PROVIDERS = (DEMO, Provider.ANTHROPIC.value, Provider.OPENAI.value)
# Compatible servers ignore the key, but the SDK insists on one.
NO_KEY_PLACEHOLDER = "not-needed"


class UnknownModelHandle(LLMBadRequest):
    """The handle is not ``provider/model`` with a provider we know."""


class ProviderNotConfigured(LLMAuthenticationError):
    """No API key for the handle's provider, neither for the organization nor in the environment."""


class ProviderURLNotAllowed(LLMBadRequest):
    """The organization's base URL points where the server may not connect (see ``core.egress``)."""


@dataclass(frozen=True)
class ModelInfo:
    handle: str
    display_name: str
    context_window: int
    max_output_tokens: int
    supports_reasoning: bool = False
    is_demo: bool = False

    @property
    def provider(self) -> str:
        return self.handle.split("/", 1)[0]

    @property
    def model(self) -> str:
        return self.handle.split("/", 1)[1]


# What a model picker offers. Any ``anthropic/…`` or ``openai/…`` model resolves, listed or not
# (Letta's seed uses ``anthropic/claude-sonnet-4-5-20250929``, which the SDK marks deprecated).
CATALOGUE: tuple[ModelInfo, ...] = (
    ModelInfo("demo/echo-1", DEMO_LABEL, 32_000, 4_096, supports_reasoning=True, is_demo=True),
    ModelInfo("anthropic/claude-sonnet-4-6", "Claude Sonnet 4.6", 200_000, 64_000, supports_reasoning=True),
    ModelInfo("anthropic/claude-haiku-4-5-20251001", "Claude Haiku 4.5", 200_000, 64_000, supports_reasoning=True),
    ModelInfo("openai/gpt-4.1", "GPT-4.1", 1_047_576, 32_768),
    ModelInfo("openai/gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768),
    ModelInfo("openai/gpt-4o-mini", "GPT-4o mini", 128_000, 16_384),
)


@dataclass(frozen=True)
class Credentials:
    api_key: str
    base_url: str
    chosen_by_organization: bool = False


def parse_handle(handle: str) -> tuple[str, str]:
    """``("anthropic", "claude-…")`` for ``"anthropic/claude-…"``; ``UnknownModelHandle`` otherwise."""
    provider, _, model = handle.strip().partition("/")
    if provider not in PROVIDERS or not model:
        known = ", ".join(f"{name}/…" for name in PROVIDERS)
        raise UnknownModelHandle(f"Unknown model handle {handle!r}: expected one of {known}")
    return provider, model


def model_info(handle: str) -> ModelInfo | None:
    """The catalogue entry for ``handle``; any ``demo/…`` handle reads as the demo model."""
    for info in CATALOGUE:
        if info.handle == handle:
            return info
    if handle.startswith(f"{DEMO}/"):
        return CATALOGUE[0]
    return None


def get_llm_client(
    handle: str, *, organization: Organization | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS
) -> tuple[LLMClient, str]:
    """The client for ``handle`` and the bare model name.

    The client retries transient errors (``with_retries``) unless ``max_attempts``
    is 1. Raises ``UnknownModelHandle`` or ``ProviderNotConfigured``. Queries the
    database (async callers go through ``sync_to_async``).
    """
    provider, model = parse_handle(handle)
    row = _settings_row(provider, organization)
    _check_url(provider, row)
    return _build(provider, model, row, max_attempts=max_attempts), model


def list_model_handles(*, organization: Organization | None = None) -> list[ModelInfo]:
    """The models a picker should offer: the demo always, the others once their provider is configured."""
    usable = {DEMO}
    for provider in (Provider.ANTHROPIC.value, Provider.OPENAI.value):
        if _credentials(provider, _settings_row(provider, organization)) is not None:
            usable.add(provider)
    return [info for info in CATALOGUE if info.provider in usable]


def _settings_row(provider: str, organization: Organization | None) -> ProviderSettings | None:
    if provider == DEMO or organization is None:
        return None
    return ProviderSettings.objects.for_org(organization).filter(provider=provider).first()


def _check_url(provider: str, row: ProviderSettings | None) -> None:
    """Refuse an organization's base URL that points at a private, loopback or link-local address."""
    credentials = _credentials(provider, row) if provider != DEMO else None
    if credentials is None or not credentials.chosen_by_organization:
        return
    try:
        check_provider_url(credentials.base_url)
    except UnsafeProviderURL as exc:
        raise ProviderURLNotAllowed(f"The organization's {provider} base URL is not allowed: {exc}") from exc


def _build(provider: str, model: str, row: ProviderSettings | None, *, max_attempts: int) -> LLMClient:
    client: LLMClient
    if provider == DEMO:
        client = DemoClient(token_delay=getattr(settings, "DEMO_TOKEN_DELAY", DEFAULT_TOKEN_DELAY))
    else:
        credentials = _credentials(provider, row)
        if credentials is None:
            env = f"{provider.upper()}_API_KEY"
            raise ProviderNotConfigured(
                f"No API key for {provider}: add one in the organization's provider settings or set {env}"
            )
        client_class = AnthropicClient if provider == Provider.ANTHROPIC else OpenAIClient
        client = client_class(api_key=credentials.api_key, base_url=credentials.base_url or None)
    return with_retries(client, max_attempts=max_attempts) if max_attempts > 1 else client


def _credentials(provider: str, row: ProviderSettings | None) -> Credentials | None:
    """The key and base URL to use, or ``None`` when the provider cannot be called."""
    env_key: str = getattr(settings, f"{provider.upper()}_API_KEY", "") or ""
    env_url: str = getattr(settings, f"{provider.upper()}_BASE_URL", "") or ""
    org_key = row.api_key if row is not None else ""
    org_url = row.base_url if row is not None else ""
    chosen = bool(org_url) and org_url != env_url
    if chosen:
        key = org_key  # never send the server's key to a URL the organization picked
        url = org_url
    else:
        key = org_key or env_key
        url = env_url
    if key:
        return Credentials(api_key=key, base_url=url, chosen_by_organization=chosen)
    if provider == Provider.OPENAI and url:
        # a local compatible server
        return Credentials(api_key=NO_KEY_PLACEHOLDER, base_url=url, chosen_by_organization=chosen)
    return None
