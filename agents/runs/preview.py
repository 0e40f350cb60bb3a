"""The agent's context window: an overview for the API, the chat's context meter, and resetting it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import transaction
from django.utils import timezone

from agents.engine.compaction import is_summary, summary_of
from agents.engine.context import build_request, tool_schemas
from agents.errors import AgentBusy, NotFound
from agents.llm.tokens import estimate_tokens, image_tokens
from agents.memory.prompt import memory_for_agent
from agents.models import Agent, Conversation, Message, MessageRole, Passage
from agents.runs.turns import model_settings, tool_specs
from agents.services import login_message_text
from agents.wire.messages import letta_timestamp

if TYPE_CHECKING:
    from agents.engine.store import MessageSnapshot
    from agents.llm.base import LLMRequest, Turn


class ContextMeter(TypedDict):
    """The chat's context meter: tokens the next model call would carry, of the window's ``max``."""

    current: int
    max: int
    estimated: bool


def _turn_text(turn: Turn) -> str:
    return json.dumps(repr(turn))


def system_prompt(*, agent: Agent, conversation: Conversation | None = None) -> str:
    """The system prompt the next step of a thread of ``agent`` sends: its system text and its compiled memory."""
    rows = list(Message.objects.in_context(agent, conversation))
    if not any(row.role == MessageRole.SYSTEM for row in rows):
        raise NotFound(f"No system message found for agent '{agent.public_id}'")
    memory = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.pk)
    return build_request([m.snapshot() for m in rows], tool_specs(agent), model_settings(agent), memory=memory).system


@dataclass(frozen=True)
class _NextCall:
    """The next model call of an agent, and its pessimistic token counts by section."""

    rows: list[Message]
    snapshots: list[MessageSnapshot]
    request: LLMRequest
    functions: list[dict[str, Any]]
    memory: str
    tokens_system: int
    tokens_functions: int
    tokens_messages: int

    @property
    def tokens(self) -> int:
        return self.tokens_system + self.tokens_functions + self.tokens_messages


def _next_call(agent: Agent) -> _NextCall:
    rows = list(Message.objects.in_context(agent))
    snapshots = [m.snapshot() for m in rows]
    specs = tool_specs(agent)
    memory = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.pk)
    request = build_request(snapshots, specs, model_settings(agent), memory=memory)
    functions = [
        {"function": {"name": t.name, "description": t.description, "parameters": t.parameters}, "type": "function"}
        for t in tool_schemas(specs)
    ]
    return _NextCall(
        rows=rows,
        snapshots=snapshots,
        request=request,
        functions=functions,
        memory=memory,
        tokens_system=estimate_tokens(request.system, pessimistic=True),
        tokens_functions=estimate_tokens(json.dumps(functions), pessimistic=True),
        tokens_messages=sum(estimate_tokens(_turn_text(t), pessimistic=True) for t in request.turns)
        + image_tokens(request),
    )


def context_meter(*, agent: Agent) -> ContextMeter:
    """The chat's context meter of ``agent`` (``context_overview``'s totals). A page reads it when it
    opens; ``agents.broadcast`` has it computed once when a run ends and sends it to every tab."""
    return {"current": _next_call(agent).tokens, "max": agent.context_window, "estimated": True}


def context_overview(*, agent: Agent) -> dict[str, Any]:
    """Letta's ``ContextWindowOverview`` of what the next model call would carry, section by section.

    Token counts are the same pessimistic estimates the compaction rule uses (about three
    characters a token), so ``context_window_size_current`` errs high; they are marked estimated.
    """
    call = _next_call(agent)
    rows, snapshots, request, functions, memory = call.rows, call.snapshots, call.request, call.functions, call.memory
    summary_row = next((row for row in snapshots if is_summary(row)), None)
    summary = summary_of(summary_row) if summary_row else None
    num_tokens_system, num_tokens_functions = call.tokens_system, call.tokens_functions
    num_tokens_messages = call.tokens_messages
    return {
        "context_window_size_max": agent.context_window,
        "context_window_size_current": call.tokens,
        "num_messages": len(rows),
        "num_archival_memory": Passage.objects.filter(agent=agent).count(),
        "num_recall_memory": Message.objects.filter(agent=agent).exclude(role=MessageRole.SYSTEM).count(),
        "num_tokens_external_memory_summary": 0,
        "external_memory_summary": "",
        "num_tokens_system": num_tokens_system,
        "system_prompt": request.system,
        "num_tokens_core_memory": estimate_tokens(memory, pessimistic=True),
        "core_memory": memory,
        "num_tokens_summary_memory": estimate_tokens(summary, pessimistic=True) if summary else 0,
        "summary_memory": summary,
        "num_tokens_functions_definitions": num_tokens_functions,
        "functions_definitions": functions,
        "num_tokens_messages": num_tokens_messages,
        "messages": [
            {
                "id": m.public_id,
                "role": m.role,
                "content": m.content,
                "tool_calls": m.tool_calls or None,
                "tool_returns": m.tool_returns or None,
                "agent_id": agent.public_id,
                "created_at": letta_timestamp(m.created_at),
            }
            for m in rows
        ],
        "token_counts_estimated": True,
    }


@transaction.atomic
def agent_reset_messages(*, agent: Agent, add_default_initial_messages: bool = True) -> Agent:
    """Start a fresh context: history stays stored and listable, the model no longer sees it.

    Refused while the agent is busy (the busy rule: a run of it is queued or running).
    """
    hold = Agent.objects.hold(agent.pk)
    if hold.busy:
        raise AgentBusy()
    texts = [agent.system] + ([login_message_text()] if add_default_initial_messages else [])
    roles = [MessageRole.SYSTEM, MessageRole.USER]
    start = hold.seqs.take(len(texts))
    Message.objects.bulk_create(
        Message(
            organization_id=agent.organization_id,
            agent=agent,
            seq=start + offset,
            role=roles[offset],
            content=[{"type": "text", "text": text}],
        )
        for offset, text in enumerate(texts)
    )
    Agent.objects.filter(pk=agent.pk).update(
        context_start_seq=start, context_summary_seq=None, context_keep_seq=None, updated_at=timezone.now()
    )
    agent.refresh_from_db()
    return agent
