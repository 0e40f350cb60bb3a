"""Agents, runs and steps as Letta's wire JSON (``AgentState``, ``Run``, ``Step``; tools: ``agents.wire.tools``).

Like every projection of ``agents.wire``, these take the rows they show and run no
queries: the caller reads the agent's blocks, attachments and in-context ids
(``agents.api.states``) and passes them in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, cast

from typing_extensions import TypedDict

from agents.llm.handles import DEFAULT_EMBEDDING_HANDLE, split_handle
from agents.models import LETTA_RUN_STATUS
from agents.wire.memory import AGENT_TYPE, Block, Memory, blocks_json, memory_json
from agents.wire.messages import ApprovalRequestMessage, approval_request
from agents.wire.tools import Tool, tool_json
from agents.wire.values import DateTime, StopReasonValue, letta_timestamp, public_id

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from agents.models import Agent, Message
    from agents.models import Block as BlockRow
    from agents.models import Run as RunRow
    from agents.models import Step as StepRow
    from providers.selectors import HandleProvider
    from tools.models import AgentTool

_DEFAULT_ENDPOINTS = {
    "anthropic": "https://api.anthropic.com/v1",
    "openai": "https://api.openai.com/v1",
}

# SDK 1.12's ``model_settings`` classes by ``provider_type``; an OpenAI-compatible server of another type
# (Ollama, vLLM) is called over OpenAI's wire and shows OpenAI's settings, which 1.12 can parse.
_MODEL_SETTINGS_TYPES = frozenset(
    {"openai", "anthropic", "google_ai", "google_vertex", "azure", "xai", "groq", "deepseek", "together", "openrouter"}
)

StepStatusName = Literal["pending", "success", "failed", "cancelled"]
RunStatusName = Literal["created", "running", "completed", "failed", "cancelled"]

# --- agents -------------------------------------------------------------------------------


class LlmConfig(TypedDict):
    model: str
    display_name: str | None
    model_endpoint_type: str
    model_endpoint: str | None
    provider_name: str
    provider_category: str
    model_wrapper: str | None
    context_window: int
    put_inner_thoughts_in_kwargs: bool
    handle: str
    temperature: float
    max_tokens: int | None
    enable_reasoner: bool
    reasoning_effort: str | None
    max_reasoning_tokens: int
    frequency_penalty: float | None
    compatibility_type: str | None
    verbosity: str | None
    tier: str | None
    parallel_tool_calls: bool


class Thinking(TypedDict):
    type: Literal["enabled", "disabled"]
    budget_tokens: int


class Reasoning(TypedDict):
    reasoning_effort: str | None


class ModelSettings(TypedDict):
    """1.x's ``model_settings``; ``thinking`` for Anthropic models, ``reasoning`` for OpenAI ones."""

    provider_type: str
    max_output_tokens: int | None
    parallel_tool_calls: bool
    temperature: float
    thinking: NotRequired[Thinking]
    reasoning: NotRequired[Reasoning]


class EmbeddingConfig(TypedDict):
    embedding_endpoint_type: str
    embedding_endpoint: str | None
    embedding_model: str
    embedding_dim: int
    embedding_chunk_size: int
    handle: str
    batch_size: int
    azure_endpoint: str | None
    azure_version: str | None
    azure_deployment: str | None


# Letta's ``compaction_settings`` fields and their defaults (``summarizer_config.py``).
COMPACTION_DEFAULTS: dict[str, Any] = {
    "model": None,
    "model_settings": None,
    "prompt": None,
    "prompt_acknowledgement": False,
    "clip_chars": 50_000,
    "mode": "sliding_window",
    "sliding_window_percentage": 0.3,
}


class CompactionSettings(TypedDict):
    model: str | None
    model_settings: dict[str, Any] | None
    prompt: str | None
    prompt_acknowledgement: bool
    clip_chars: int | None
    mode: Literal["all", "sliding_window", "self_compact_all", "self_compact_sliding_window"]
    sliding_window_percentage: float


def compaction_settings(agent: Agent) -> CompactionSettings | None:
    """The agent's ``compaction_settings`` as Letta answers them: ``null`` when never set, else with defaults."""
    stored = agent.compaction_settings or {}
    return cast("CompactionSettings", {**COMPACTION_DEFAULTS, **stored}) if stored else None


class AgentState(TypedDict):
    created_by_id: str | None
    last_updated_by_id: str | None
    created_at: DateTime | None
    updated_at: DateTime | None
    id: str
    name: str
    tool_rules: list[dict[str, Any]]
    message_ids: list[str]
    system: str
    agent_type: str
    llm_config: LlmConfig
    embedding_config: EmbeddingConfig
    response_format: dict[str, Any] | None
    description: str | None
    metadata: dict[str, Any] | None
    memory: Memory
    blocks: list[Block]
    tools: list[Tool]
    sources: list[dict[str, Any]]
    tags: list[str]
    tool_exec_environment_variables: list[dict[str, Any]]
    secrets: list[dict[str, Any]]
    project_id: str | None
    template_id: str | None
    base_template_id: str | None
    deployment_id: str | None
    entity_id: str | None
    identity_ids: list[str]
    identities: list[dict[str, Any]]
    message_buffer_autoclear: bool
    enable_sleeptime: bool | None
    multi_agent_group: dict[str, Any] | None
    managed_group: dict[str, Any] | None
    last_run_completion: DateTime | None
    last_run_duration_ms: int | None
    timezone: str
    max_files_open: int
    per_file_view_window_char_limit: int
    hidden: bool | None
    model: str
    """letta-client 1.x reads ``model``, ``model_settings`` and ``embedding`` beside Letta 0.13's fields."""
    model_settings: ModelSettings
    compaction_settings: CompactionSettings | None
    embedding: str | None
    pending_approval: ApprovalRequestMessage | None
    """The approval request waiting for a person, with ``include=agent.pending_approval``; else ``null``."""


def model_endpoint(provider: str) -> str | None:
    """The vendor's public endpoint. The server's own ``*_BASE_URL`` (often an internal address)
    is never shown to tenants (issue 14, item 16)."""
    return _DEFAULT_ENDPOINTS.get(provider)


def _endpoint_type(handle: str, provider: HandleProvider | None) -> str:
    """Letta's endpoint type of a handle: its provider's type's (``my-claude/…`` → ``anthropic``), else its prefix."""
    return provider.endpoint_type if provider is not None else split_handle(handle)[0]


def llm_config(agent: Agent, provider: HandleProvider | None = None) -> LlmConfig:
    """Letta's ``LlmConfig``, built from the agent's model fields and the provider its handle names."""
    name, model = split_handle(agent.model)
    endpoint_type = _endpoint_type(agent.model, provider)
    return {
        "model": model,
        "display_name": None,
        "model_endpoint_type": endpoint_type,
        "model_endpoint": (provider.endpoint if provider else None) or model_endpoint(endpoint_type),
        "provider_name": name,
        "provider_category": provider.category if provider is not None else "base",
        "model_wrapper": None,
        "context_window": agent.context_window,
        "put_inner_thoughts_in_kwargs": False,
        "handle": agent.model,
        "temperature": agent.temperature,
        "max_tokens": agent.max_tokens,
        "enable_reasoner": agent.enable_reasoner,
        "reasoning_effort": agent.reasoning_effort or None,
        "max_reasoning_tokens": agent.max_reasoning_tokens,
        "frequency_penalty": None,
        "compatibility_type": None,
        "verbosity": None,
        "tier": None,
        "parallel_tool_calls": agent.parallel_tool_calls,
    }


def model_settings(agent: Agent, provider: HandleProvider | None = None) -> ModelSettings:
    """1.x's ``model_settings`` (beside ``llm_config``): the agent's sampling settings by provider type."""
    endpoint_type = _endpoint_type(agent.model, provider)
    if provider is not None and endpoint_type not in _MODEL_SETTINGS_TYPES:
        endpoint_type = "openai"
    result: ModelSettings = {
        "provider_type": endpoint_type,
        "max_output_tokens": agent.max_tokens,
        "parallel_tool_calls": agent.parallel_tool_calls,
        "temperature": agent.temperature,
    }
    if endpoint_type == "anthropic":
        budget = agent.max_reasoning_tokens if agent.enable_reasoner else 0
        result["thinking"] = {"type": "enabled" if budget else "disabled", "budget_tokens": budget}
    elif endpoint_type == "openai":
        result["reasoning"] = {"reasoning_effort": agent.reasoning_effort or None}
    return result


def embedding_config(handle: str, provider: HandleProvider | None = None) -> EmbeddingConfig:
    """Letta's ``EmbeddingConfig`` for an embedding handle (validated by ``agents.services``)."""
    name, model = split_handle(handle or DEFAULT_EMBEDDING_HANDLE)
    endpoint: str | None
    if name == "letta":
        endpoint_type, endpoint, dim = "hugging-face", "https://embeddings.letta.com/", 1024
    elif provider is not None:
        endpoint_type = provider.embedding_endpoint_type
        endpoint, dim = provider.endpoint or model_endpoint(endpoint_type), 2000
    else:
        endpoint_type, endpoint, dim = name, model_endpoint(name), 2000
    return {
        "embedding_endpoint_type": endpoint_type,
        "embedding_endpoint": endpoint,
        "embedding_model": model,
        "embedding_dim": dim,
        "embedding_chunk_size": 300,
        "handle": handle or DEFAULT_EMBEDDING_HANDLE,
        "batch_size": 1024,
        "azure_endpoint": None,
        "azure_version": None,
        "azure_deployment": None,
    }


def approval_rules(agent_tools: Iterable[AgentTool]) -> list[dict[str, Any]]:
    """One ``requires_approval`` rule per attached tool whose effective approval is on."""
    return [
        {"tool_name": at.tool.name, "type": "requires_approval", "prompt_template": None}
        for at in agent_tools
        if at.effective_requires_approval
    ]


def agent_state(
    agent: Agent,
    *,
    blocks: Sequence[BlockRow],
    agent_tools: Sequence[AgentTool],
    message_ids: Sequence[Any],
    pending_approval: Message | None = None,
    providers: Mapping[str, HandleProvider] | None = None,
) -> AgentState:
    """Letta's ``AgentState``.

    ``blocks`` are the agent's blocks in prompt order, ``agent_tools`` its attachments in
    attachment order, ``message_ids`` its in-context rows. ``tool_rules`` are the stored
    rules plus one derived ``requires_approval`` rule per attached tool that needs approval:
    the ``AgentTool`` row is the single source of truth for approval. ``pending_approval`` is
    the assistant row waiting for a human, when the caller asked for it
    (``include=agent.pending_approval``); it becomes its approval request message.
    ``providers`` are the providers its model and embedding handles name, by name
    (``providers.selectors.handle_providers``): an organization's ``my-claude/…`` is an
    ``anthropic`` model of category ``byok``.
    """
    providers = providers or {}
    model_provider = providers.get(split_handle(agent.model)[0])
    stored_rules = [rule for rule in agent.tool_rules or [] if rule.get("type") != "requires_approval"]
    block_list = blocks_json(blocks)
    return {
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": letta_timestamp(agent.created_at),
        "updated_at": letta_timestamp(agent.updated_at),
        "id": agent.public_id,
        "name": agent.name,
        "tool_rules": stored_rules + approval_rules(agent_tools),
        "message_ids": [public_id("message", pk) or "" for pk in message_ids],
        "system": agent.system,
        "agent_type": AGENT_TYPE,
        "llm_config": llm_config(agent, model_provider),
        "embedding_config": embedding_config(agent.embedding, providers.get(split_handle(agent.embedding)[0])),
        "response_format": None,
        "description": agent.description or None,
        "metadata": dict(agent.metadata) if agent.metadata else None,
        "memory": memory_json(block_list),
        "blocks": block_list,
        "tools": [tool_json(at.tool) for at in agent_tools],
        "sources": [],
        "tags": list(agent.tags or []),
        "tool_exec_environment_variables": [],
        "secrets": [],
        "project_id": None,
        "template_id": None,
        "base_template_id": None,
        "deployment_id": None,
        "entity_id": None,
        "identity_ids": [],
        "identities": [],
        "message_buffer_autoclear": False,
        "enable_sleeptime": None,
        "multi_agent_group": None,
        "managed_group": None,
        "last_run_completion": None,
        "last_run_duration_ms": None,
        "timezone": "UTC",
        "max_files_open": 5,
        "per_file_view_window_char_limit": 15000,
        "hidden": None,
        "model": agent.model,
        "model_settings": model_settings(agent, model_provider),
        "compaction_settings": compaction_settings(agent),
        "embedding": agent.embedding or None,
        "pending_approval": cast("ApprovalRequestMessage | None", approval_request(pending_approval)),
    }


# --- runs and steps -----------------------------------------------------------------------


class RequestConfig(TypedDict):
    use_assistant_message: bool
    assistant_message_tool_name: str
    assistant_message_tool_kwarg: str
    include_return_message_types: list[str] | None


class Run(TypedDict):
    created_by_id: str | None
    last_updated_by_id: str | None
    created_at: DateTime | None
    updated_at: DateTime | None
    status: RunStatusName
    completed_at: DateTime | None
    stop_reason: StopReasonValue | None
    metadata: dict[str, Any] | None
    job_type: Literal["run"]
    background: bool
    agent_id: str | None
    conversation_id: str | None
    callback_url: str | None
    callback_sent_at: DateTime | None
    callback_status_code: int | None
    callback_error: str | None
    ttft_ns: int | None
    total_duration_ns: int | None
    id: str
    request_config: RequestConfig


def run_json(run: RunRow) -> Run:
    """Letta's ``Run`` of a ``Run`` row."""
    duration_ms = run.duration_ms
    return {
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": letta_timestamp(run.created_at),
        "updated_at": letta_timestamp(run.completed_at or run.started_at or run.created_at),
        "status": cast("RunStatusName", LETTA_RUN_STATUS.get(run.status, run.status)),
        "completed_at": letta_timestamp(run.completed_at),
        "stop_reason": run.stop_reason or None,
        "metadata": {"error": run.error} if run.error else None,
        "job_type": "run",
        "background": run.background,
        "agent_id": public_id("agent", run.agent_id),
        "conversation_id": public_id("conv", run.conversation_id),
        "callback_url": None,
        "callback_sent_at": None,
        "callback_status_code": None,
        "callback_error": None,
        "ttft_ns": None,
        "total_duration_ns": duration_ms * 1_000_000 if duration_ms is not None else None,
        "id": run.public_id,
        "request_config": {
            "use_assistant_message": True,
            "assistant_message_tool_name": "send_message",
            "assistant_message_tool_kwarg": "message",
            "include_return_message_types": None,
        },
    }


class CompletionTokensDetails(TypedDict):
    reasoning_tokens: int


class Step(TypedDict):
    id: str
    origin: str | None
    provider_id: str | None
    job_id: str | None
    run_id: str | None
    agent_id: str | None
    provider_name: str | None
    provider_category: str | None
    model: str | None
    model_endpoint: str | None
    context_window_limit: int | None
    completion_tokens: int | None
    prompt_tokens: int | None
    total_tokens: int | None
    completion_tokens_details: CompletionTokensDetails | None
    stop_reason: StopReasonValue | None
    tags: list[str]
    tid: str | None
    trace_id: str | None
    messages: list[dict[str, Any]]
    feedback: str | None
    project_id: str | None
    error_type: str | None
    error_data: dict[str, Any] | None
    status: StepStatusName


def step_json(step: StepRow) -> Step:
    """Letta's ``Step`` of a ``Step`` row."""
    provider, model = split_handle(step.model)
    error = step.error if isinstance(step.error, dict) else ({"message": step.error} if step.error else None)
    return {
        "id": step.public_id,
        "origin": None,
        "provider_id": None,
        "job_id": public_id("run", step.run_id),
        "run_id": public_id("run", step.run_id),
        "agent_id": public_id("agent", step.agent_id),
        "provider_name": provider,
        "provider_category": "base",
        "model": model,
        "model_endpoint": model_endpoint(provider),
        "context_window_limit": None,
        "completion_tokens": step.completion_tokens,
        "prompt_tokens": step.prompt_tokens,
        "total_tokens": step.total_tokens,
        "completion_tokens_details": {"reasoning_tokens": step.reasoning_tokens} if step.reasoning_tokens else None,
        "stop_reason": step.stop_reason or None,
        "tags": list(step.tags or []),
        "tid": None,
        "trace_id": None,
        "messages": [],
        "feedback": step.feedback or None,
        "project_id": None,
        "error_type": (error or {}).get("type") if error else None,
        "error_data": error,
        "status": cast("StepStatusName", step.status),
    }
