"""Letta 0.16.8's shapes for providers and models (``letta/schemas/model.py``, ``providers/base.py``).

Projections only: they take rows or listed models and run no queries. A provider's key is
never in an answer (``api_key`` and ``api_key_enc`` are null; ``has_api_key`` says whether
one is stored). Beside Letta's fields, a model says whether its provider answered the last
time it was asked (``available``) and why not (``unavailable_reason``), and where its
limits come from (``limits_source``).
"""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from providers.models import Provider
    from providers.selectors import ListedModel

DEFAULT_TEMPERATURE = 0.7
EMBEDDING_CHUNK_SIZE = 300
EMBEDDING_BATCH_SIZE = 32


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


def provider_json(provider: Provider) -> dict[str, Any]:
    """Letta's ``Provider``, the key left out."""
    return {
        "id": provider.public_id,
        "name": provider.name,
        "provider_type": provider.provider_type,
        "provider_category": provider.category,
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
        "status": provider.status,
        "status_reason": provider.status_reason or None,
    }


def model_json(model: ListedModel) -> dict[str, Any]:
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
        "provider_category": model.provider_category,
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


def embedding_model_json(model: ListedModel) -> dict[str, Any]:
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
