"""Storing a compaction, and compacting an agent's context on request.

A compaction appends the summary row and moves the context's pointers in one
transaction (``store_compaction``): the engine's store calls it inside a turn, and
``agent_summarize`` (``POST /v1/agents/{id}/summarize``) calls it between turns, after
the engine's ``compact`` planned and summarized.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from asgiref.sync import sync_to_async
from django.db import transaction

from agents.engine.compaction import (
    SUMMARY_KIND,
    TRIGGER_MANUAL,
    CompactionFailed,
    EmptySummary,
    compact,
    is_summary,
    summary_content,
    summary_of,
)
from agents.errors import AgentBusy, Conflict
from agents.llm.registry import get_llm_client
from agents.models import Agent, Conversation, Message, MessageRole, Run

if TYPE_CHECKING:
    from agents.engine.compaction import Compaction
    from agents.engine.store import MessageSnapshot
    from agents.llm.base import LLMClient

# Asked for explicitly, a compaction keeps about the newest 30% of the conversation (as Letta).
REQUESTED_EVICT_SHARE = 0.7


class SummarizeAnswer(TypedDict):
    summary: str | None
    num_messages_before: int
    num_messages_after: int


class ContextMovedOn(Conflict):
    default_detail = "CONFLICT: The conversation changed while it was being summarized. Try again."


def store_compaction(
    *,
    agent_id: Any,
    organization_id: Any,
    run_id: Any,
    seq: int,
    summary: str,
    keep_from_seq: int,
    evicted: int,
    stats: dict[str, Any] | None = None,
    conversation_id: Any = None,
) -> Message:
    """Append the summary row at ``seq`` and start the context's rows at ``keep_from_seq``
    (in the agent's default thread, or in conversation ``conversation_id``).

    Call inside the transaction that owns the agent's rows (a turn's store, or ``agent_summarize``).
    ``stats`` (Letta's ``compaction_stats``) is kept in the row's metadata for the wire's ``summary_message``.
    """
    metadata: dict[str, Any] = {"kind": SUMMARY_KIND, "evicted_messages": evicted}
    if stats:
        metadata["compaction_stats"] = stats
    row = Message.objects.create(
        organization_id=organization_id,
        agent_id=agent_id,
        seq=seq,
        role=MessageRole.USER,
        content=[{"type": "text", "text": summary_content(summary)}],
        metadata=metadata,
        run_id=run_id,
        conversation_id=conversation_id,
    )
    holder = (
        Agent.objects.filter(pk=agent_id)
        if conversation_id is None
        else Conversation.objects.filter(pk=conversation_id, agent_id=agent_id)
    )
    holder.update(context_summary_seq=seq, context_keep_seq=keep_from_seq)
    return row


def _pointers(holder: Agent | Conversation) -> tuple[int, int | None, int | None]:
    return holder.context_start_seq, holder.context_summary_seq, holder.context_keep_seq


def _context(agent: Agent, conversation: Conversation | None) -> tuple[list[MessageSnapshot], LLMClient, str]:
    rows = [m.snapshot() for m in Message.objects.in_context(agent, conversation)]
    client, model = get_llm_client(agent.model, organization=agent.organization)
    return rows, client, model


def _store(agent: Agent, conversation: Conversation | None, compaction: Compaction) -> int:
    conversation_id = conversation.pk if conversation is not None else None
    with transaction.atomic():
        hold = Agent.objects.hold(agent.pk, conversation_id)
        if hold.busy:
            raise AgentBusy()
        if (hold.context_start_seq, hold.context_summary_seq, hold.context_keep_seq) != _pointers(
            conversation or agent
        ):
            raise ContextMovedOn()
        store_compaction(
            agent_id=agent.pk,
            organization_id=agent.organization_id,
            run_id=None,
            seq=hold.seqs.take(),
            summary=compaction.summary,
            keep_from_seq=compaction.plan.keep_from_seq,
            evicted=len(compaction.plan.evicted),
            stats=compaction.stats,
            conversation_id=conversation_id,
        )
        fresh = Conversation.objects.get(pk=conversation_id) if conversation_id else None
        return Message.objects.in_context(Agent.objects.get(pk=agent.pk), fresh).count()


async def agent_summarize(*, agent: Agent, conversation: Conversation | None = None) -> SummarizeAnswer:
    """Summarize the older part of a thread's context now (``agent``'s default thread, or
    ``conversation``), refused with 409 while a run is active on that thread.

    Answers Letta's ``{summary, num_messages_before, num_messages_after}``; with nothing to
    evict, the summary is the current one (or ``None``) and the counts are equal.
    """
    if await Run.objects.abusy(agent.pk, conversation.pk if conversation is not None else None):
        raise AgentBusy()
    rows, client, model = await sync_to_async(_context)(agent, conversation)
    try:
        compaction = await compact(
            client,
            rows,
            model=model,
            context_window=agent.context_window,
            evict_share=REQUESTED_EVICT_SHARE,
            trigger=TRIGGER_MANUAL,
        )
    except EmptySummary as exc:
        raise Conflict("The model returned an empty summary of the conversation.") from exc
    except CompactionFailed as exc:
        raise Conflict(exc.error) from exc
    if compaction is None:
        current = next((row for row in rows if is_summary(row)), None)
        summary = summary_of(current) if current else None
        return {"summary": summary, "num_messages_before": len(rows), "num_messages_after": len(rows)}
    after = await sync_to_async(_store)(agent, conversation, compaction)
    return {"summary": compaction.summary, "num_messages_before": len(rows), "num_messages_after": after}
