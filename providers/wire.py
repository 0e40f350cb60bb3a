"""Letta 0.16.8's shapes for providers and models (``letta/schemas/model.py``, ``providers/base.py``).

Projections only: they take rows or listed models and run no queries. A provider's key is
never in an answer (``api_key`` and ``api_key_enc`` are null; ``has_api_key`` says whether
one is stored). Beside Letta's fields, a model says whether its provider answered the last
time it was asked (``available``) and why not (``unavailable_reason``), and where its
limits come from (``limits_source``).
"""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Any, Literal, NotRequired

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from datetime import datetime

    from providers.models import Provider as ProviderRow
    from providers.selectors import ListedModel

DEFAULT_TEMPERATURE = 0.7
EMBEDDING_CHUNK_SIZE = 300
EMBEDDING_BATCH_SIZE = 32


ProviderStatusName = Literal["unknown", "available", "unavailable"]
CategoryName = Literal["base", "byok"]


class Provider(TypedDict):
    """Letta's ``Provider``; the key fields are always null, ``has_api_key`` says whether one is stored."""

    id: str
    name: str
    provider_type: str
    provider_category: CategoryName
    api_key: str | None
    base_url: str | None
    access_key: str | None
    region: str | None
    api_version: str | None
    organization_id: str | None
    updated_at: str | None
    last_synced: str | None
    api_key_enc: str | None
    access_key_enc: str | None
    has_api_key: bool
    status: ProviderStatusName
    status_reason: str | None
    """Why its models could not be listed, the last time it was asked."""


class Model(TypedDict):
    """Letta's ``Model``: every ``LLMConfig`` field plus the new names, and whether its provider answered."""

    handle: str
    name: str
    display_name: str
    provider_type: str
    provider_name: str
    model_type: Literal["llm"]
    max_context_window: int
    model: str
    model_endpoint_type: str
    model_endpoint: str | None
    model_wrapper: str | None
    context_window: int
    put_inner_thoughts_in_kwargs: bool
    temperature: float
    max_tokens: int | None
    enable_reasoner: bool
    reasoning_effort: str | None
    max_reasoning_tokens: int
    effort: str | None
    frequency_penalty: float | None
    compatibility_type: str | None
    verbosity: str | None
    tier: str | None
    parallel_tool_calls: bool
    provider_category: CategoryName
    response_format: dict[str, Any] | None
    strict: bool
    return_logprobs: bool
    top_logprobs: int | None
    return_token_ids: bool
    tool_call_parser: str | None
    available: bool
    """Whether its provider answered the last time it was asked."""
    unavailable_reason: str | None
    """Why its provider did not answer."""
    limits_source: str
    """Where its limits come from: ``provider``, ``models.dev`` or ``default``."""


class EmbeddingModel(TypedDict):
    """Letta's ``EmbeddingModel``."""

    handle: str
    name: str
    display_name: str
    provider_type: str
    provider_name: str
    model_type: Literal["embedding"]
    embedding_dim: int | None
    embedding_model: str
    embedding_endpoint_type: str
    embedding_endpoint: str | None
    embedding_chunk_size: int
    batch_size: int
    azure_endpoint: str | None
    azure_version: str | None
    azure_deployment: str | None
    available: bool
    unavailable_reason: str | None


class ProviderMessage(TypedDict):
    """Letta's answer to a check or a delete."""

    message: str


class AuthenticationError(TypedDict):
    type: Literal["llm_authentication"]
    message: str
    detail: str


class CheckRefused(TypedDict):
    """A check's 401: Letta's ``error`` when the provider refused the key, or the API's ``detail`` when the
    request itself had no valid API key of ours."""

    error: NotRequired[AuthenticationError]
    detail: NotRequired[str]


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


def provider_json(provider: ProviderRow) -> Provider:
    """Letta's ``Provider``, the key left out."""
    return {
        "id": provider.public_id,
        "name": provider.name,
        "provider_type": provider.provider_type,
        "provider_category": _category(provider.category),
        "api_key": None,
        "base_url": provider.base_url or None,
        "access_key": None,
        "region": provider.region or None,
        "api_version": provider.api_version or None,
        "organization_id": provider.organization.public_id if provider.organization else None,
        "updated_at": _iso(provider.updated_at),
        "last_synced": _iso(provider.last_synced),
        "api_key_enc": None,
        "access_key_enc": None,
        "has_api_key": provider.has_api_key,
        "status": _status(provider.status),
        "status_reason": provider.status_reason or None,
    }


def _status(value: str) -> ProviderStatusName:
    return "available" if value == "available" else "unavailable" if value == "unavailable" else "unknown"


def _category(value: str) -> CategoryName:
    return "byok" if value == "byok" else "base"


def model_json(model: ListedModel) -> Model:
    """Letta's ``Model`` (every ``LLMConfig`` field plus the new names)."""
    return {
        "handle": model.handle,
        "name": model.name,
        "display_name": model.display_name or model.name,
        "provider_type": model.provider_type,
        "provider_name": model.provider_name,
        "model_type": "llm",
        "max_context_window": model.context_window,
        "model": model.name,
        "model_endpoint_type": model.endpoint_type,
        "model_endpoint": model.endpoint,
        "model_wrapper": None,
        "context_window": model.context_window,
        "put_inner_thoughts_in_kwargs": False,
        "temperature": DEFAULT_TEMPERATURE,
        "max_tokens": model.max_output_tokens,
        "enable_reasoner": False,
        "reasoning_effort": None,
        "max_reasoning_tokens": 0,
        "effort": None,
        "frequency_penalty": None,
        "compatibility_type": None,
        "verbosity": None,
        "tier": None,
        "parallel_tool_calls": False,
        "provider_category": _category(model.provider_category),
        "response_format": None,
        "strict": False,
        "return_logprobs": False,
        "top_logprobs": None,
        "return_token_ids": False,
        "tool_call_parser": None,
        "available": model.available,
        "unavailable_reason": model.unavailable_reason or None,
        "limits_source": model.limits_source,
    }


def embedding_model_json(model: ListedModel) -> EmbeddingModel:
    """Letta's ``EmbeddingModel``; its ``provider_type`` and ``provider_name`` are the endpoint type, as in Letta."""
    return {
        "handle": model.handle,
        "name": model.name,
        "display_name": model.display_name or model.name,
        "provider_type": model.embedding_endpoint_type,
        "provider_name": model.embedding_endpoint_type,
        "model_type": "embedding",
        "embedding_dim": model.embedding_dim,
        "embedding_model": model.name,
        "embedding_endpoint_type": model.embedding_endpoint_type,
        "embedding_endpoint": model.endpoint,
        "embedding_chunk_size": EMBEDDING_CHUNK_SIZE,
        "batch_size": EMBEDDING_BATCH_SIZE,
        "azure_endpoint": model.endpoint if model.provider_type == "azure" else None,
        "azure_version": None,
        "azure_deployment": model.name if model.provider_type == "azure" else None,
        "available": model.available,
        "unavailable_reason": model.unavailable_reason or None,
    }


def check_refused(reason: str) -> CheckRefused:
    """Letta's 401 body for a refused key."""
    return {
        "error": {
            "type": "llm_authentication",
            "message": "Authentication failed with the LLM model provider.",
            "detail": f"UNAUTHENTICATED: {reason}",
        }
    }
