"""An agent's model settings from what Letta clients send: the defaults a model handle gives, and
Letta's ``model_settings`` object as the agent's fields (LETTA_CONVERSATIONS §4, §4.1). No Django."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agents.errors import InvalidArgument
from agents.llm.handles import split_handle
from agents.llm.registry import model_info
from providers.selectors import provider_names, provider_type_of
from providers.types import SPECS as PROVIDER_TYPES

if TYPE_CHECKING:
    from accounts.models import Organization

# Anthropic models with extended thinking get it on by default, as on Letta.
_THINKING_MODEL_PREFIXES = ("claude-3-7", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4", "claude-4")
DEFAULT_MAX_REASONING_TOKENS = 1024
# Letta's ``model_settings`` (LETTA_CONVERSATIONS §4.1): per ``provider_type``, the temperature an object
# without one sets; the types that carry ``thinking`` (Anthropic's) or ``reasoning`` (OpenAI's).
MODEL_SETTINGS_TEMPERATURE: dict[str, float] = {
    "openai": 0.7,
    "sglang": 0.7,
    "anthropic": 1.0,
    "google_ai": 0.7,
    "google_vertex": 0.7,
    "zai": 0.7,
    "chatgpt_oauth": 0.7,
    "azure": 0.7,
    "xai": 0.7,
    "groq": 0.7,
    "deepseek": 0.7,
    "together": 0.7,
    "bedrock": 0.7,
    "openrouter": 0.7,
    "baseten": 0.7,
}
MODEL_SETTINGS_PROVIDER_TYPES = tuple(MODEL_SETTINGS_TEMPERATURE)
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
# A model's window when the request gives none: the model's, capped as Letta caps it (its global limit).
MAX_DEFAULT_CONTEXT_WINDOW = 128_000
UNKNOWN_MODEL_CONTEXT_WINDOW = 200_000
# Letta's ``compaction_settings`` modes (``summarizer_config.py``; the defaults: ``wire.resources``).
COMPACTION_MODES = ("all", "sliding_window", "self_compact_all", "self_compact_sliding_window")


def reasoning_defaults(handle: str) -> dict[str, Any]:
    """What ``enable_reasoner`` / ``max_reasoning_tokens`` a new agent on ``handle`` starts with."""
    provider, model = split_handle(handle)
    thinking = provider == "anthropic" and model.startswith(_THINKING_MODEL_PREFIXES)
    return {"enable_reasoner": thinking, "max_reasoning_tokens": DEFAULT_MAX_REASONING_TOKENS if thinking else 0}


def default_context_window(handle: str) -> int:
    """An agent's window when none is given: the model's, at most ``MAX_DEFAULT_CONTEXT_WINDOW`` (Letta's rule)."""
    info = model_info(handle)
    return min(info.context_window if info is not None else UNKNOWN_MODEL_CONTEXT_WINDOW, MAX_DEFAULT_CONTEXT_WINDOW)


def model_settings_fields(model_settings: Mapping[str, Any], *, enable_reasoner: bool) -> dict[str, Any]:
    """Letta's ``model_settings`` as the agent's model fields (LETTA_CONVERSATIONS §4.1).

    As in Letta 0.16.8, every field applies with its default when left out, except
    ``max_output_tokens``, which applies only when sent; ``parallel_tool_calls`` defaults to
    true. Anthropic's ``thinking.budget_tokens`` is the thinking budget; unlike Letta (which
    stores ``thinking.type`` where no code reads it) a ``type`` given turns thinking on or off.
    OpenAI's ``reasoning.reasoning_effort`` is the effort ("high" without a ``reasoning``
    object, "minimal" in one without an effort, as Letta's defaults).
    """
    provider_type = model_settings["provider_type"]
    fields: dict[str, Any] = {
        "parallel_tool_calls": model_settings.get("parallel_tool_calls", True) is not False,
        "temperature": model_settings.get("temperature", MODEL_SETTINGS_TEMPERATURE[provider_type]),
    }
    if model_settings.get("max_output_tokens") is not None:
        fields["max_tokens"] = model_settings["max_output_tokens"]
    if provider_type == "anthropic":
        thinking = model_settings.get("thinking") or {}
        fields["max_reasoning_tokens"] = thinking.get("budget_tokens", DEFAULT_MAX_REASONING_TOKENS)
        kind = thinking.get("type")
        fields["enable_reasoner"] = enable_reasoner if kind is None else kind == "enabled"
    elif provider_type in ("openai", "sglang", "chatgpt_oauth"):
        default_effort = "medium" if provider_type == "chatgpt_oauth" else "high"
        reasoning = model_settings.get("reasoning")
        effort = default_effort if reasoning is None else reasoning.get("reasoning_effort") or "minimal"
        fields["reasoning_effort"] = effort
    return fields


def compaction_settings_merged(stored: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """A PATCH's ``compaction_settings`` merged into the stored ones; a changed ``mode`` resets ``prompt`` (Letta)."""
    merged = {**stored, **given}
    if "mode" in given and given["mode"] != stored.get("mode", "sliding_window") and "prompt" not in given:
        merged.pop("prompt", None)
    return merged


LLM_CONFIG_FIELDS = (
    "temperature",
    "max_tokens",
    "context_window",
    "parallel_tool_calls",
    "enable_reasoner",
    "max_reasoning_tokens",
    "reasoning_effort",
)


def handle_from_llm_config(config: Mapping[str, Any]) -> str | None:
    """The model handle an ``LlmConfig`` names: its ``handle``, else ``<endpoint type>/<model>``."""
    if config.get("handle"):
        return str(config["handle"])
    provider = config.get("model_endpoint_type") or config.get("provider_name")
    if config.get("model") and provider:
        return f"{provider}/{config['model']}"
    return None


def new_agent_settings(
    handle: str,
    config: Mapping[str, Any],
    explicit: Mapping[str, Any],
    model_settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A new agent's model settings: ``handle``'s reasoning defaults, then ``config``'s (an ``LlmConfig``),
    then Letta's ``model_settings``, then the ``explicit`` keyword settings that are not ``None``."""
    if model_settings is not None:
        reasoner = bool(config.get("enable_reasoner", reasoning_defaults(handle)["enable_reasoner"]))
        config = {**config, **model_settings_fields(model_settings, enable_reasoner=reasoner)}
    chosen = {
        **reasoning_defaults(handle),
        **{k: config[k] for k in LLM_CONFIG_FIELDS if config.get(k) is not None},
        **{k: v for k, v in explicit.items() if v is not None},
    }
    if chosen.get("reasoning_effort") is None:
        chosen.pop("reasoning_effort", None)
    chosen.setdefault("context_window", default_context_window(handle))
    return chosen


MODEL_PROVIDERS = ("anthropic", "demo", "openai")
EMBEDDING_PROVIDERS = ("demo", "letta", "openai")


def validate_model_handle(handle: str, *, organization: Organization | None = None) -> str:
    """``provider/model`` with a provider we can talk to (the demo, ``anthropic``, ``openai``, or one of the
    organization's or the server's providers); raises ``InvalidArgument`` naming the handle."""
    provider, model = split_handle(handle or "")
    known = MODEL_PROVIDERS + tuple(provider_names(organization=organization))
    if provider not in known or not model:
        raise InvalidArgument(
            f"Model handle {handle!r} is not supported: expected 'provider/model' with provider one of "
            f"{', '.join(dict.fromkeys(known))}.",
            field="model",
        )
    return handle


def validate_embedding_handle(handle: str, *, organization: Organization | None = None) -> str:
    """A handle of ``EMBEDDING_PROVIDERS`` (as before), or of one of the organization's or the server's
    providers whose type embeds; raises ``InvalidArgument`` naming the handle."""
    provider, model = split_handle(handle or "")
    if provider not in EMBEDDING_PROVIDERS and model:
        provider_type = provider_type_of(organization=organization, name=provider)
        if provider_type in PROVIDER_TYPES:
            if not PROVIDER_TYPES[provider_type].embeddings:
                raise InvalidArgument(f"Embedding model {model} is not supported by {provider}", field="embedding")
            return handle
    if provider not in EMBEDDING_PROVIDERS or not model:
        raise InvalidArgument(f"Embedding provider {provider!r} is not supported", field="embedding")
    supported = {
        "openai": model.startswith("text-embedding-"),
        "letta": model == "letta-free",
        "demo": True,  # the offline hashed bag-of-words embedding (agents.memory.archival)
    }[provider]
    if not supported:
        raise InvalidArgument(f"Embedding model {model} is not supported by {provider}", field="embedding")
    return handle
