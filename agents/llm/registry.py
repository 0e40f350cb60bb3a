"""Model handles (``provider/model``) → a ready client, through the organization's providers, then the server's.

``providers.selectors.endpoint_for`` says where a handle's provider is and which key it
uses (``providers.endpoints`` holds the rules: the server's own key is never sent to a
base URL an organization chose, and such a URL must pass ``core.egress.check_provider_url``
before each call). Anthropic providers get an ``AnthropicClient``; OpenAI and every
OpenAI-compatible type (Ollama, vLLM, LM Studio, OpenRouter, Groq, Together, DeepSeek, xAI,
Gemini's OpenAI-compatible endpoint) an ``OpenAIClient`` at the provider's base URL; Azure
an ``AzureOpenAIClient``. ``demo/…`` is the offline demo model. A model need not have been
discovered to be called: any model of a known provider resolves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from agents.llm.anthropic import AnthropicClient
from agents.llm.azure import AzureOpenAIClient
from agents.llm.base import LLMAuthenticationError, LLMBadRequest
from agents.llm.demo import DEFAULT_TOKEN_DELAY, DemoClient
from agents.llm.openai import OpenAIClient
from agents.llm.retry import DEFAULT_MAX_ATTEMPTS, with_retries
from providers import catalog as provider_catalog
from providers import selectors as provider_selectors
from providers.endpoints import NO_KEY_PLACEHOLDER, EndpointNotAllowed
from providers.services import model_list_fresh
from providers.types import DEMO, openai_base_url

if TYPE_CHECKING:
    from accounts.models import Organization
    from agents.llm.base import LLMClient
    from providers.endpoints import Endpoint

__all__ = [
    "NO_KEY_PLACEHOLDER",
    "ModelInfo",
    "ProviderNotConfigured",
    "ProviderURLNotAllowed",
    "UnknownModelHandle",
    "get_llm_client",
    "list_model_handles",
    "model_choices",
    "model_info",
    "parse_handle",
    "reusable_llm_client",
    "takes_images",
    "with_retries",
]

# Handles these providers' names always parse: the server may configure them at any time.
BUILTIN_PROVIDERS = (DEMO, "anthropic", "openai")
_ENV_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


class UnknownModelHandle(LLMBadRequest):
    """The handle is not ``provider/model`` with a provider we know."""


class ProviderNotConfigured(LLMAuthenticationError):
    """No API key for the handle's provider, neither for the organization nor in the environment."""


class ProviderURLNotAllowed(LLMBadRequest):
    """The organization's base URL points where the server may not connect (see ``core.egress``)."""


@dataclass(frozen=True)
class ModelInfo:
    """A model a picker offers: its handle, label and limits, and whether its provider last answered."""

    handle: str
    display_name: str
    context_window: int
    max_output_tokens: int | None
    provider_name: str
    provider_type: str
    provider_category: str
    is_demo: bool = False
    available: bool = True
    unavailable_reason: str = ""

    @property
    def provider(self) -> str:
        return self.handle.split("/", 1)[0]

    @property
    def model(self) -> str:
        return self.handle.split("/", 1)[1]


def parse_handle(handle: str, *, organization: Organization | None = None) -> tuple[str, str]:
    """``("anthropic", "claude-…")`` for ``"anthropic/claude-…"``; ``UnknownModelHandle`` unless the
    provider is the demo, ``anthropic``, ``openai``, or one of the organization's or the server's."""
    provider, _, model = handle.strip().partition("/")
    if not model or not provider:
        raise _unknown(handle, organization)
    if provider in BUILTIN_PROVIDERS:
        return provider, model
    if provider_selectors.endpoint_for(organization=organization, name=provider) is None:
        raise _unknown(handle, organization)
    return provider, model


def _unknown(handle: str, organization: Organization | None) -> UnknownModelHandle:
    names = list(dict.fromkeys([*BUILTIN_PROVIDERS, *provider_selectors.provider_names(organization=organization)]))
    known = ", ".join(f"{name}/…" for name in names)
    return UnknownModelHandle(f"Unknown model handle {handle!r}: expected one of {known}")


def get_llm_client(
    handle: str, *, organization: Organization | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS
) -> tuple[LLMClient, str]:
    """The client for ``handle`` and the bare model name.

    The client retries transient errors (``with_retries``) unless ``max_attempts``
    is 1. Raises ``UnknownModelHandle``, ``ProviderNotConfigured`` or
    ``ProviderURLNotAllowed``. Queries the database (async callers go through ``sync_to_async``).
    """
    client, model, _reusable = _resolve(handle, organization, max_attempts)
    return client, model


def reusable_llm_client(handle: str, *, organization: Organization | None = None) -> tuple[LLMClient, bool]:
    """``get_llm_client``'s client, and whether a later turn may use it as it is (while the providers are
    unchanged): not when an organization chose its base URL, whose host is checked again before each use."""
    client, _model, reusable = _resolve(handle, organization, DEFAULT_MAX_ATTEMPTS)
    return client, reusable


def _resolve(handle: str, organization: Organization | None, max_attempts: int) -> tuple[LLMClient, str, bool]:
    provider, model = parse_handle(handle, organization=organization)
    client: LLMClient
    reusable = True
    if provider == DEMO:
        client = DemoClient(token_delay=getattr(settings, "DEMO_TOKEN_DELAY", DEFAULT_TOKEN_DELAY))
    else:
        endpoint = provider_selectors.endpoint_for(organization=organization, name=provider)
        client = _build(provider, endpoint)
        reusable = endpoint is not None and not endpoint.chosen_by_organization
    return (with_retries(client, max_attempts=max_attempts) if max_attempts > 1 else client), model, reusable


def _build(provider: str, endpoint: Endpoint | None) -> LLMClient:
    if endpoint is None or not endpoint.api_key:
        env = _ENV_KEYS.get(provider, f"{provider.upper()}_API_KEY")
        raise ProviderNotConfigured(
            f"No API key for {provider}: add one in the organization's provider settings or set {env}"
        )
    try:
        endpoint.check_egress()
    except EndpointNotAllowed as exc:
        raise ProviderURLNotAllowed(str(exc)) from exc
    protocol = endpoint.spec.protocol
    if protocol == "anthropic":
        return AnthropicClient(api_key=endpoint.api_key, base_url=endpoint.base_url or None)
    if protocol == "azure":
        return AzureOpenAIClient(api_key=endpoint.api_key, base_url=endpoint.url, api_version=endpoint.api_version)
    return OpenAIClient(api_key=endpoint.api_key, base_url=openai_base_url(endpoint.provider_type, endpoint.base_url))


def takes_images(handle: str, *, organization: Organization | None = None) -> bool:
    """Whether the handle's model reads images (``providers.catalog.takes_images``); the demo model does not.

    Queries the database for a provider other than the built-in ones (its type names its catalogue).
    """
    provider, _, model = handle.strip().partition("/")
    if not model or provider == DEMO:
        return False
    endpoint = (
        None
        if provider in BUILTIN_PROVIDERS
        else provider_selectors.endpoint_for(organization=organization, name=provider)
    )
    catalog_id = endpoint.spec.catalog_id if endpoint is not None else provider
    return provider_catalog.takes_images(catalog_id, model)


def list_model_handles(*, organization: Organization | None = None) -> list[ModelInfo]:
    """The chat models a picker offers, as their providers last listed them (refreshing stale ones); the demo last."""
    return [_info(model) for model in model_list_fresh(organization=organization)]


ModelChoices = list[tuple[str, list[tuple[str, str]]]]


def model_choices(*, organization: Organization | None = None, current: str | None = None) -> ModelChoices:
    """A picker's options: ``(provider group, [(handle, label), …])`` per ``<optgroup>``, the demo last;
    ``current`` first when no provider lists it (so a form keeps it)."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for info in list_model_handles(organization=organization):
        if info.is_demo:
            group = "Demo (offline)"
        else:
            owner = "this organization" if info.provider_category == "byok" else "server"
            group = f"{info.provider_name} ({owner})"
        groups.setdefault(group, []).append((info.handle, _label(info)))
    choices = list(groups.items())
    if current and current not in {handle for options in groups.values() for handle, _ in options}:
        choices.insert(0, ("Current model", [(current, f"{current} (not listed by its provider)")]))
    return choices


def _label(info: ModelInfo) -> str:
    """How a picker names a model: its name, handle and context window (and when its provider is down)."""
    if info.is_demo:
        return f"{info.display_name} — {info.handle}"
    name = info.handle if info.display_name in ("", info.model) else f"{info.display_name} — {info.handle}"
    label = f"{name} · {info.context_window:,} tokens"
    return f"{label} (unavailable)" if not info.available else label


def model_info(handle: str, *, organization: Organization | None = None) -> ModelInfo | None:
    """What the organization's providers last said about ``handle``; any ``demo/…`` handle reads as the demo model."""
    listed = provider_selectors.model_get(organization=organization, handle=handle)
    return _info(listed) if listed is not None else None


def _info(model: provider_selectors.ListedModel) -> ModelInfo:
    return ModelInfo(
        handle=model.handle,
        display_name=model.display_name,
        context_window=model.context_window,
        max_output_tokens=model.max_output_tokens,
        provider_name=model.provider_name,
        provider_type=model.provider_type,
        provider_category=model.provider_category,
        is_demo=model.is_demo,
        available=model.available,
        unavailable_reason=model.unavailable_reason,
    )
