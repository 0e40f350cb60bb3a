"""The projection from our rows to Letta's wire JSON (``letta-client==0.1.324`` types).

Every endpoint and the SSE stream render through these functions, so a message
looks the same in a blocking response, a stream and ``messages.list``. Field
names, key order and value formats follow a real Letta 0.13.0 server
(``shared/letta-wire``); where Letta is inconsistent we pick one rule:

- every LettaMessage of a row carries the row's id; parts of an assistant row get
  ``otid = part_otid(row id, index)``, user and approval rows echo the stored otid;
- ``is_err`` is ``true`` or ``null`` (never ``false``), ``seq_id`` and ``sender_id`` are ``null``;
- LettaMessage dates have second precision (``2026-11-30T03:16:27+00:00``), resource
  timestamps keep microseconds (``2026-11-30T03:16:27.667416Z``).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from agents.engine.compaction import summary_from_text
from agents.llm.handles import DEFAULT_EMBEDDING_HANDLE, split_handle
from agents.models import LETTA_RUN_STATUS, MessageRole
from agents.wire.memory import blocks_json, memory_json

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from agents.models import Agent, Run, Step
    from tools.models import AgentTool, Tool

AGENT_TYPE = "letta_v1_agent"

_DEFAULT_ENDPOINTS = {
    "anthropic": "https://api.anthropic.com/v1",
    "openai": "https://api.openai.com/v1",
}

# --- ids and times ------------------------------------------------------------------------


def public_id(prefix: str, value: Any) -> str | None:
    """``prefix-<uuid>`` for a raw UUID (or an id that already carries the prefix); ``None`` stays ``None``."""
    if value is None or value == "":
        return None
    text = str(value)
    return text if text.startswith(f"{prefix}-") else f"{prefix}-{text}"


def part_otid(row_id: Any, index: int) -> str:
    """The otid of part ``index`` of a row: the row's UUID with its low 7 bits replaced by the index.

    This is Letta's rule (it shows as the last two hex digits becoming ``80``/``81``… or ``00``/``01``…).
    """
    if not 0 <= index < 128:
        raise ValueError("A row has at most 128 parts.")
    raw = str(row_id).removeprefix("message-")
    return str(uuid.UUID(int=(uuid.UUID(raw).int & ~0x7F) | index))


def letta_date(value: datetime | None) -> str:
    """A LettaMessage ``date``: UTC, second precision, ``+00:00`` offset."""
    moment = (value or timezone.now()).astimezone(UTC)
    return moment.isoformat(timespec="seconds")


def letta_timestamp(value: datetime | None) -> str | None:
    """A resource timestamp (``created_at`` …): UTC ISO 8601 with a ``Z``, microseconds when non-zero."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --- messages -----------------------------------------------------------------------------


def message_header(row: Any, message_type: str, otid: str | None) -> dict[str, Any]:
    return {
        "id": public_id("message", row.id),
        "date": letta_date(getattr(row, "created_at", None)),
        "name": getattr(row, "name", "") or None,
        "message_type": message_type,
        "otid": otid,
        "sender_id": None,
        "step_id": public_id("step", getattr(row, "step_id", None)),
        "is_err": True if getattr(row, "is_err", False) else None,
        "seq_id": None,
        "run_id": public_id("run", getattr(row, "run_id", None)),
    }


def wire_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """A stored call (``{"id", "name", "arguments", ...}``) as Letta's ``ToolCall``."""
    return {"name": call.get("name"), "arguments": call.get("arguments"), "tool_call_id": call.get("id")}


def wire_tool_return(item: dict[str, Any]) -> dict[str, Any]:
    """A stored result as an item of ``tool_returns`` (and of ``approvals`` for client-side results)."""
    return {
        "type": "tool",
        "tool_return": item.get("tool_return"),
        "status": item.get("status"),
        "tool_call_id": item.get("tool_call_id"),
        "stdout": item.get("stdout"),
        "stderr": item.get("stderr"),
    }


AUDIT_FIELDS = ("decided_by", "decided_by_user_id", "decided_by_api_key_id", "decided_at", "transport")


def wire_approval(item: dict[str, Any]) -> dict[str, Any]:
    """A stored approval decision as Letta's ``ApprovalReturn`` / ``ToolReturn`` item.

    The audit (who, when, how: ``AUDIT_FIELDS``) and, on decisions, the edit
    (``original_arguments``, ``arguments``, ``always_allow``) follow Letta's fields;
    Letta clients ignore them. Items stored before the audit existed have none of
    them and show exactly Letta's fields.
    """
    audit: dict[str, Any] = {}
    if "decided_at" in item:
        audit = {name: item.get(name) for name in AUDIT_FIELDS}
    if item.get("type") == "tool":
        return wire_tool_return(item) | audit
    decision = {
        "type": "approval",
        "tool_call_id": item.get("tool_call_id"),
        "approve": item.get("approve"),
        "reason": item.get("reason"),
    }
    if audit:
        audit |= {
            "original_arguments": item.get("original_arguments"),
            "arguments": item.get("arguments"),
            "always_allow": bool(item.get("always_allow")),
        }
    return decision | audit


def _text_of(content: Iterable[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def _assistant_messages(row: Any) -> list[dict[str, Any]]:
    parts: list[tuple[str, dict[str, Any]]] = []
    for part in row.content or []:
        kind = part.get("type")
        if kind == "reasoning":
            parts.append(
                (
                    "reasoning_message",
                    {"source": "reasoner_model", "reasoning": part.get("text", ""), "signature": part.get("signature")},
                )
            )
        elif kind == "redacted_reasoning":
            parts.append(("hidden_reasoning_message", {"state": "redacted", "hidden_reasoning": part.get("data")}))
        elif kind == "text" and part.get("text"):
            parts.append(("assistant_message", {"content": part["text"]}))

    calls = list(row.tool_calls or [])
    free = [c for c in calls if not c.get("requires_approval")]
    gated = [c for c in calls if c.get("requires_approval")]
    for message_type, batch in (("tool_call_message", free), ("approval_request_message", gated)):
        if batch:
            wire_calls = [wire_tool_call(c) for c in batch]
            parts.append((message_type, {"tool_call": wire_calls[0], "tool_calls": wire_calls}))

    return [message_header(row, kind, part_otid(row.id, index)) | fields for index, (kind, fields) in enumerate(parts)]


def _tool_return_message(row: Any) -> list[dict[str, Any]]:
    returns = [wire_tool_return(item) for item in row.tool_returns or []]
    if not returns:
        return []
    first = returns[0]
    return [
        message_header(row, "tool_return_message", part_otid(row.id, 0))
        | {
            "tool_return": first["tool_return"],
            "status": first["status"],
            "tool_call_id": first["tool_call_id"],
            "stdout": first["stdout"],
            "stderr": first["stderr"],
            "tool_returns": returns,
        }
    ]


def _approval_response_message(row: Any) -> list[dict[str, Any]]:
    approvals = [wire_approval(item) for item in row.approvals or []]
    # The legacy fields describe approvals[0], and only when it is an approve/deny decision.
    first = approvals[0] if approvals and approvals[0]["type"] == "approval" else None
    return [
        message_header(row, "approval_response_message", row.otid or None)
        | {
            "approvals": approvals,
            "approve": first["approve"] if first else None,
            "approval_request_id": first["tool_call_id"] if first else None,
            "reason": first["reason"] if first else None,
        }
    ]


def _user_content(content: Sequence[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(part.get("type") == "text" for part in content) and len(content) <= 1:
        return _text_of(content)
    return [dict(part) for part in content]


def letta_messages_for_row(row: Any) -> list[dict[str, Any]]:
    """The LettaMessages one row shows as, in wire order; all share the row's id.

    ``row`` is a ``Message`` or anything with its attributes (``id``, ``role``, ``content``,
    ``tool_calls``, ``tool_returns``, ``approvals``, ``otid``, ``name``, ``run_id``,
    ``step_id``, ``is_err``, ``created_at``). An assistant row gives its reasoning and
    text parts in content order, then one ``tool_call_message`` for the calls that run
    freely, then one ``approval_request_message`` for the calls that wait for a human.
    """
    role = row.role
    if role == MessageRole.ASSISTANT:
        return _assistant_messages(row)
    if role == MessageRole.TOOL:
        return _tool_return_message(row)
    if role == MessageRole.APPROVAL:
        return _approval_response_message(row)
    if role == MessageRole.USER:
        return [message_header(row, "user_message", row.otid or None) | {"content": _user_content(row.content or [])}]
    if role == MessageRole.SYSTEM:
        return [message_header(row, "system_message", row.otid or None) | {"content": _text_of(row.content or [])}]
    return []


def letta_messages(rows: Iterable[Any]) -> list[dict[str, Any]]:
    return [message for row in rows for message in letta_messages_for_row(row)]


def row_text(row: Any) -> str:
    """The text parts of a row, joined."""
    return _text_of(row.content or [])


def row_kind(row: Any) -> str:
    """``login_notice`` for the login message that opens a conversation (Letta's ``{"type": "login"}``
    user row), ``summary`` for a compaction's summary, ``message`` for every other row."""
    if (row.metadata or {}).get("kind") == "summary":
        return "summary"
    if row.role != MessageRole.USER or len(row.content or []) != 1:
        return "message"
    text = _text_of(row.content)
    if not text.startswith("{"):
        return "message"
    try:
        parsed = json.loads(text)
    except ValueError:
        return "message"
    return "login_notice" if isinstance(parsed, dict) and parsed.get("type") == "login" else "message"


def compaction_messages(row: Any) -> list[dict[str, Any]]:
    """A compaction's summary row as letta-client 1.x's ``event_message`` (``event_type: "compaction"``) and
    ``summary_message``, both with the row's id and Letta's ``compaction_stats``."""
    stats = (row.metadata or {}).get("compaction_stats")
    return [
        message_header(row, "event_message", part_otid(row.id, 0))
        | {"event_type": "compaction", "event_data": stats or {}},
        message_header(row, "summary_message", part_otid(row.id, 1))
        | {"summary": summary_from_text(row_text(row)), "compaction_stats": stats},
    ]


def approval_request(row: Any) -> dict[str, Any] | None:
    """The ``approval_request_message`` of an assistant row whose calls wait for a human, if any."""
    if row is None:
        return None
    return next((m for m in letta_messages_for_row(row) if m["message_type"] == "approval_request_message"), None)


# --- tools --------------------------------------------------------------------------------


def tool_json(tool: Tool) -> dict[str, Any]:
    """Letta's ``Tool``."""
    return {
        "id": tool.public_id,
        "tool_type": tool.tool_type,
        "description": tool.description or None,
        "source_type": tool.source_type,
        "name": tool.name,
        "tags": list(tool.tags or []),
        "source_code": tool.source_code or None,
        "json_schema": tool.json_schema or None,
        "args_json_schema": tool.args_json_schema,
        "return_char_limit": tool.return_char_limit,
        "pip_requirements": None,
        "npm_requirements": None,
        "default_requires_approval": tool.default_requires_approval,
        "enable_parallel_execution": tool.enable_parallel_execution,
        "created_by_id": None,
        "last_updated_by_id": None,
        "metadata_": dict(tool.metadata or {}),
    }


# --- agents -------------------------------------------------------------------------------


def model_endpoint(provider: str) -> str | None:
    """The vendor's public endpoint. The server's own ``*_BASE_URL`` (often an internal address)
    is never shown to tenants (issue 14, item 16)."""
    return _DEFAULT_ENDPOINTS.get(provider)


def llm_config(agent: Agent) -> dict[str, Any]:
    """Letta's ``LlmConfig``, built from the agent's model fields."""
    provider, model = split_handle(agent.model)
    return {
        "model": model,
        "display_name": None,
        "model_endpoint_type": provider,
        "model_endpoint": model_endpoint(provider),
        "provider_name": provider,
        "provider_category": "base",
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


def model_settings(agent: Agent) -> dict[str, Any]:
    """1.x's ``model_settings`` (beside ``llm_config``): the agent's sampling settings by provider."""
    provider, _ = split_handle(agent.model)
    result: dict[str, Any] = {
        "provider_type": provider,
        "max_output_tokens": agent.max_tokens,
        "parallel_tool_calls": agent.parallel_tool_calls,
        "temperature": agent.temperature,
    }
    if provider == "anthropic":
        budget = agent.max_reasoning_tokens if agent.enable_reasoner else 0
        result["thinking"] = {"type": "enabled" if budget else "disabled", "budget_tokens": budget}
    elif provider == "openai":
        result["reasoning"] = {"reasoning_effort": agent.reasoning_effort or None}
    return result


def embedding_config(handle: str) -> dict[str, Any]:
    """Letta's ``EmbeddingConfig`` for an embedding handle (validated by ``agents.services``)."""
    provider, model = split_handle(handle or DEFAULT_EMBEDDING_HANDLE)
    endpoint: str | None
    if provider == "letta":
        endpoint_type, endpoint, dim = "hugging-face", "https://embeddings.letta.com/", 1024
    else:
        endpoint_type, endpoint, dim = provider, model_endpoint(provider), 2000
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


def agent_tool_rows(agent: Agent) -> list[AgentTool]:
    """The agent's attachments in attachment order (from ``prefetch_related("agent_tools__tool")`` if done)."""
    prefetched = "agent_tools" in getattr(agent, "_prefetched_objects_cache", {})
    rows = list(agent.agent_tools.all() if prefetched else agent.agent_tools.select_related("tool"))
    rows.sort(key=lambda at: (at.created_at, at.tool.name))
    return rows


def agent_state(
    agent: Agent, *, message_ids: Sequence[Any] | None = None, pending_approval: Any = None
) -> dict[str, Any]:
    """Letta's ``AgentState``.

    ``tool_rules`` are the stored rules plus one derived ``requires_approval`` rule per
    attached tool that needs approval: the ``AgentTool`` row is the single source of
    truth for approval. ``message_ids`` are the in-context rows (queried when not given).
    ``pending_approval`` is the assistant row waiting for a human, when the caller asked
    for it (``include=agent.pending_approval``); it becomes its approval request message.
    """
    from agents.models import Message

    agent_tools = agent_tool_rows(agent)
    if message_ids is None:
        message_ids = list(Message.objects.in_context(agent).values_list("id", flat=True))
    stored_rules = [rule for rule in agent.tool_rules or [] if rule.get("type") != "requires_approval"]
    return {
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": letta_timestamp(agent.created_at),
        "updated_at": letta_timestamp(agent.updated_at),
        "id": agent.public_id,
        "name": agent.name,
        "tool_rules": stored_rules + approval_rules(agent_tools),
        "message_ids": [public_id("message", pk) for pk in message_ids],
        "system": agent.system,
        "agent_type": AGENT_TYPE,
        "llm_config": llm_config(agent),
        "embedding_config": embedding_config(agent.embedding),
        "response_format": None,
        "description": agent.description or None,
        "metadata": dict(agent.metadata) if agent.metadata else None,
        "memory": memory_json(agent),
        "blocks": blocks_json(agent),
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
        # letta-client 1.x reads these beside Letta 0.13's fields.
        "model": agent.model,
        "model_settings": model_settings(agent),
        "embedding": agent.embedding or None,
        "pending_approval": approval_request(pending_approval),
    }


# --- runs and steps -----------------------------------------------------------------------


def run_json(run: Run) -> dict[str, Any]:
    """Letta's ``Run``."""
    duration_ms = run.duration_ms
    return {
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": letta_timestamp(run.created_at),
        "updated_at": letta_timestamp(run.completed_at or run.started_at or run.created_at),
        "status": LETTA_RUN_STATUS.get(run.status, run.status),
        "completed_at": letta_timestamp(run.completed_at),
        "stop_reason": run.stop_reason or None,
        "metadata": {"error": run.error} if run.error else None,
        "job_type": "run",
        "background": run.background,
        "agent_id": public_id("agent", run.agent_id),
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


def step_json(step: Step) -> dict[str, Any]:
    """Letta's ``Step``."""
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
        "tags": [],
        "tid": None,
        "trace_id": None,
        "messages": [],
        "feedback": None,
        "project_id": None,
        "error_type": (error or {}).get("type") if error else None,
        "error_data": error,
        "status": step.status,
    }
