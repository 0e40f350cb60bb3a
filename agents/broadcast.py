"""The one announcer: everything an agent's open tabs hear goes out through this module, in order.

- A run's events go through the run's ``RunAnnouncer`` (``agents.runs.execute`` opens one
  for each run it executes): token deltas are coalesced for a few milliseconds, so they
  cross the channel layer a few per frame, and everything goes out in the run's order.
  While no connection is in the agent's group (no tab, no SSE stream: an SDK's blocking
  call, a background run nobody follows), the announcer keeps the run's events and sends
  them in one batch when someone joins (asked again every ``LISTENERS_RECHECK_SECONDS``)
  or the run ends, rather than crossing the channel layer for each one.
- A run's end is announced by ``announce_run_end`` once ``agents.runs.state`` has recorded
  it: through the run's announcer when the run executes in this process (after its last
  deltas), else straight to the agent's group (a sweep, a cancel of a queued run). The
  ``run_finished`` payload carries what every tab shows next, computed here once per run:
  the run as the chat shows it (``run``), the memory panel's blocks (``memory``) and the
  context meter (``context``); the last two only when someone listens (a tab that joins
  later reads them when it loads).
- A memory edit is announced by ``announce_memory_edit`` once it is committed. An edit a
  tool made inside a run executing here waits in the run's announcer and goes out right
  after the event of the tool row that holds it (in ``seq`` order, so the row it annotates
  is on the page first); an edit outside a run (the memory panel, the API) goes out at once.

Rows are committed before their event exists, so nothing announces what a reader cannot
load yet (persist before you emit).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from channels_redis.core import RedisChannelLayer  # type: ignore[import-untyped]
from django.db import transaction

from agents.engine.events import (
    MessageEvent,
    ReasoningDeltaEvent,
    RunFinishedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agents.engine.stop import StopReason
from agents.models import Agent
from agents.selectors import pending_approval_row
from agents.wire.chat import MemoryEditNote, RunUsage, chat_row, chat_run
from agents.wire.messages import approval_request, public_id

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from agents.engine.events import EngineEvent
    from agents.engine.store import MessageSnapshot

logger = logging.getLogger(__name__)

COALESCE_SECONDS = 0.015
# How long a run's announcer trusts "nobody is in the agent's group" before it asks again.
LISTENERS_RECHECK_SECONDS = 0.25


def agent_group(agent_id: Any, conversation_id: Any = None) -> str:
    """The group of a thread's listeners: the agent's default thread (its chat tabs), or a conversation's."""
    return f"agent.{agent_id}" if conversation_id is None else f"conversation.{conversation_id}"


def approvals_group(organization_id: Any) -> str:
    """The group of every open page of an organization's members (the approvals inbox and badge)."""
    return f"org.{organization_id}.approvals"


def _changes_approvals(payload: dict[str, Any]) -> bool:
    """Whether a payload makes an approval request pending (a run stopped for one) or resolves one."""
    if payload["type"] == "run_finished":
        return payload.get("pending_approval") is not None
    if payload["type"] == "message":
        return any(m["message_type"] == "approval_response_message" for m in payload.get("messages", []))
    return False


async def has_listeners(agent_id: Any, conversation_id: Any = None) -> bool:
    """Whether any connection (a chat tab, an SSE stream) is in the thread's group now."""
    layer = get_channel_layer()
    return layer is not None and await _group_has_members(layer, agent_group(agent_id, conversation_id))


async def _group_has_members(layer: BaseChannelLayer, group: str) -> bool:
    """One look at the layer's own record of ``group`` (one Redis round trip); ``True`` for a layer
    this cannot ask, so that it is always sent to."""
    if isinstance(layer, InMemoryChannelLayer):
        joined = layer.groups.get(group, {})
        return any(since > time.time() - layer.group_expiry for since in joined.values())
    if isinstance(layer, RedisChannelLayer):
        # The sorted set ``group_send`` reads: each member channel scored by when it joined.
        connection = layer.connection(layer.consistent_hash(group))
        members = await connection.zcount(layer._group_key(group), int(time.time()) - layer.group_expiry, "+inf")
        return bool(members)
    return True


def _organization_of(agent_id: Any) -> Any:
    return Agent.objects.filter(pk=agent_id).values_list("organization_id", flat=True).first()


def event_payload(event: EngineEvent, *, memory_edits: Sequence[MemoryEditNote] = ()) -> dict[str, Any]:
    """The JSON an engine event travels as (to browsers and across processes); ``memory_edits`` are
    the notes of a tool row's memory edits (``agents.memory.notes.memory_edit_notes``)."""
    # "seq_from".."seq" is the range of engine events a payload covers (merged deltas cover several).
    base = {"type": event.type, "run_id": public_id("run", event.run_id), "seq_from": event.seq, "seq": event.seq}
    if isinstance(event, MessageEvent):
        payload = base | chat_row(event.message, memory_edits=memory_edits) | {"streamed": event.streamed}
        if event.message.role == "approval":
            # The answer to an approval request: its run is working on it, so nothing waits for a person
            # (``agents.selectors.pending_approval_rows``); every tab stops showing the request.
            payload["pending_approval"] = None
        return payload
    if isinstance(event, RunFinishedEvent):
        status = StopReason(event.stop_reason).run_status
        usage = asdict(event.usage)
        return base | {
            "stop_reason": event.stop_reason,
            "status": status,
            "usage": usage,
            "error": event.error,
            "pending_approval": approval_request(event.awaiting_approval),
            "run": chat_run(
                run_id=event.run_id,
                status=status,
                stop_reason=event.stop_reason,
                error=event.error,
                usage=cast("RunUsage", usage),
            ),
        }
    fields = {k: v for k, v in asdict(event).items() if k not in ("run_id", "seq", "type")}
    fields["message_id"] = public_id("message", fields["message_id"])
    fields["step_id"] = public_id("step", fields.get("step_id"))
    return base | fields


@dataclass(frozen=True)
class ChatState:
    """What the chat's tabs hear beside a row or a run's end, computed where this module cannot
    import from: the memory tools import it (through ``agents.memory.services``), and the chat
    and the context meter sit rooms above it. ``AgentsConfig.ready`` hands it in with ``describe_chat_with``."""

    # The notes of the memory edits a tool row's calls made (``agents.memory.notes``).
    tool_row_notes: Callable[[MessageSnapshot], Sequence[MemoryEditNote]]
    # What changed for a tab when a run ended: the memory panel and the context meter
    # (``agents.chat.actions.chat_memory``), computed once per run here.
    run_end_state: Callable[[Agent], dict[str, Any]]


_chat_state: ChatState | None = None


def describe_chat_with(state: ChatState) -> None:
    global _chat_state
    _chat_state = state


def _tool_row_payload(event: MessageEvent) -> dict[str, Any]:
    """A tool row's payload, with the notes of the memory edits its calls made (may query)."""
    notes: Sequence[MemoryEditNote] = ()
    try:
        notes = _chat_state.tool_row_notes(event.message) if _chat_state else ()
    except Exception:
        # The row goes out either way; a tab reads its notes when it loads the row again.
        logger.exception("Could not read the memory notes of tool row %s", event.message.id)
    return event_payload(event, memory_edits=notes)


def _run_end_payload(agent_id: Any, finished: RunFinishedEvent) -> dict[str, Any]:
    payload = event_payload(finished)
    if _chat_state is None:
        return payload
    try:
        payload |= _chat_state.run_end_state(Agent.objects.get(pk=agent_id))
    except Exception:
        # The end goes out either way; the panel keeps what it shows until the next page load.
        logger.exception("Could not measure the context of agent %s after run %s", agent_id, finished.run_id)
    return payload


async def publish(agent_id: Any, payloads: list[dict[str, Any]], *, conversation_id: Any = None) -> None:
    """The only sender to a thread's group (``agent_group``), and to its organization's approvals group
    when an approval request becomes pending or is answered (the inbox reads the new state itself).

    Announcing is best-effort: with the channel layer unreachable (a Redis restart) the payloads
    are dropped with a warning and the turn goes on; tabs see the gap in ``seq`` and resync."""
    layer = get_channel_layer()
    if layer is None or not payloads:
        return
    try:
        await _send(layer, agent_id, conversation_id, payloads)
    except Exception:
        logger.warning("Could not announce %s events of agent %s; tabs resync", len(payloads), agent_id, exc_info=True)


async def _send(layer: Any, agent_id: Any, conversation_id: Any, payloads: list[dict[str, Any]]) -> None:
    await layer.group_send(agent_group(agent_id, conversation_id), {"type": "agent.events", "events": payloads})
    if any(_changes_approvals(payload) for payload in payloads):
        organization_id = await sync_to_async(_organization_of)(agent_id)
        if organization_id is not None:
            await layer.group_send(
                approvals_group(organization_id),
                {"type": "approvals.changed", "agent_id": public_id("agent", agent_id)},
            )


@dataclass(frozen=True)
class _MemoryEdit:
    """A committed edit of a block, waiting for the event of the tool row that holds it."""

    message_id: str | None
    agent_ids: tuple[Any, ...]
    payload: dict[str, Any]


# The announcers of the runs executing in this process, by public run id: where a run's end and
# its tools' memory edits find their place in the run's order. Read from worker threads (on commit).
_executing: dict[str | None, RunAnnouncer] = {}


class RunAnnouncer:
    """Announces one run's events in order, merging runs of token deltas of the same part.

    Use it as ``async with``: while open, the run's end and the memory edits of its tools go
    through it (``announce_run_end``, ``announce_memory_edit``); closing it sends what is left.
    """

    def __init__(self, *, run_id: Any, agent_id: Any, conversation_id: Any = None) -> None:
        self.run_id = run_id
        self.agent_id = agent_id
        self.conversation_id = conversation_id
        self._pending: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._edits: list[_MemoryEdit] = []
        self._edits_lock = threading.Lock()
        self._listened = False
        self._listeners_checked_at: float | None = None

    async def __aenter__(self) -> RunAnnouncer:
        _executing[public_id("run", self.run_id)] = self
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if _executing.get(public_id("run", self.run_id)) is self:
            del _executing[public_id("run", self.run_id)]
        await self._release_edits(None, every=True)
        await self.flush(final=True)

    async def listening(self) -> bool:
        """Whether anyone is in the agent's group; once someone was, the rest of the run goes out live."""
        now = time.monotonic()
        if not self._listened and (
            self._listeners_checked_at is None or now - self._listeners_checked_at >= LISTENERS_RECHECK_SECONDS
        ):
            self._listeners_checked_at = now
            self._listened = await has_listeners(self.agent_id, self.conversation_id)
        return self._listened

    async def announce(self, event: EngineEvent, *, payload: dict[str, Any] | None = None) -> None:
        """Send ``event`` (as ``payload`` when given) after everything before it (a token delta
        within a few milliseconds)."""
        if payload is None and isinstance(event, MessageEvent) and event.message.role == "tool":
            payload = await sync_to_async(_tool_row_payload)(event)
        elif payload is None:
            payload = event_payload(event)
        # When the executor let the event go (Unix seconds; merged deltas keep their first's), so
        # a client can tell how long an event took to reach it (benchmarks/bench_chat_streams.py).
        payload["emitted_at"] = time.time()
        if isinstance(event, ReasoningDeltaEvent | TextDeltaEvent | ToolCallDeltaEvent):
            self._merge(payload)
            if self._timer is None:
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(COALESCE_SECONDS, lambda: loop.create_task(self.flush()))
            return
        if isinstance(event, RunFinishedEvent):
            await self._release_edits(None, every=True)  # whatever the run changed, before its end
        self._pending.append(payload)
        if isinstance(event, MessageEvent):
            await self._release_edits(payload["row"]["id"], every=False)
        await self.flush()

    def hold_memory_edit(self, edit: _MemoryEdit) -> None:
        """Keep a committed edit until the event of its tool row (called from any thread)."""
        with self._edits_lock:
            self._edits.append(edit)

    async def _release_edits(self, message_id: str | None, *, every: bool) -> None:
        """Queue the held edits of tool row ``message_id`` (all of them with ``every``) after what is pending."""
        with self._edits_lock:
            due = [edit for edit in self._edits if every or edit.message_id == message_id]
            self._edits = [edit for edit in self._edits if edit not in due]
        # In the run's order for the agent's tabs when the run is on their (default) thread.
        in_order = self.agent_id if self.conversation_id is None else None
        for edit in due:
            if in_order in edit.agent_ids:
                self._pending.append(edit.payload)
            for agent_id in edit.agent_ids:
                if agent_id != in_order:
                    await _publish_edit(agent_id, edit.payload)

    def _merge(self, payload: dict[str, Any]) -> None:
        last = self._pending[-1] if self._pending else None
        same_part = (
            last is not None
            and last["type"] == payload["type"]
            and last["message_id"] == payload["message_id"]
            and last.get("index") == payload.get("index")
            and last.get("part_index") == payload.get("part_index")
            and not payload.get("signature")
        )
        if not same_part:
            self._pending.append(payload)
            return
        assert last is not None
        key = "arguments_delta" if payload["type"] == "tool_call_delta" else "text"
        last[key] = (last.get(key) or "") + (payload.get(key) or "")
        last["seq"] = payload["seq"]

    async def flush(self, *, final: bool = False) -> None:
        """Send what is pending; while nobody listens, keep it for a later batch (the ``final`` one sends all)."""
        async with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._pending:
                return
            urgent = final or any(_changes_approvals(payload) for payload in self._pending)
            if not urgent and not await self.listening():
                return  # the run's end (or someone joining) sends it
            pending, self._pending = self._pending, []
            await publish(self.agent_id, pending, conversation_id=self.conversation_id)


async def announce_run_end(agent_id: Any, finished: RunFinishedEvent, *, conversation_id: Any = None) -> None:
    """Announce a run's recorded end: after the run's own events when it executes in this process.
    The memory panel and the context meter are measured only for someone listening; a conversation
    has no chat tabs, so its end is the event alone."""
    announcer = _executing.get(public_id("run", finished.run_id))
    if conversation_id is not None:
        listening = False
    else:
        listening = await (announcer.listening() if announcer is not None else has_listeners(agent_id))
    payload = await sync_to_async(_run_end_payload)(agent_id, finished) if listening else event_payload(finished)
    if announcer is not None:
        await announcer.announce(finished, payload=payload)
    else:
        await publish(agent_id, [payload], conversation_id=conversation_id)


def announce_run_end_on_commit(agent_id: Any, finished: RunFinishedEvent, *, conversation_id: Any = None) -> None:
    """Announce an end the engine did not see (a cancel, a refusal, a sweep) once it is committed
    (at once outside a transaction). The payload says whether an approval still waits."""

    def send() -> None:
        try:
            if conversation_id is not None:
                async_to_sync(publish)(agent_id, [event_payload(finished)], conversation_id=conversation_id)
                return
            agent = Agent.objects.get(pk=agent_id)
            awaiting = pending_approval_row(agent)
            verdict = replace(finished, awaiting_approval=awaiting.snapshot() if awaiting else None)
            async_to_sync(publish)(agent_id, [_run_end_payload(agent_id, verdict)])
        except Exception:
            # The run is ended either way; a tab that missed the verdict reads it when it resyncs.
            logger.exception("Could not tell the tabs of agent %s that run %s ended", agent_id, finished.run_id)

    transaction.on_commit(send)


def announce_memory_edit(*, agent_ids: Sequence[Any], payload: dict[str, Any]) -> None:
    """Announce a block's edit (``agents.memory.services.memory_updated_payload``) to every agent
    it is attached to, once committed: in the order of the run that made it, when that run
    executes here, else at once."""
    edit = _MemoryEdit(message_id=payload.get("message_id"), agent_ids=tuple(agent_ids), payload=payload)

    def send() -> None:
        announcer = _executing.get(payload.get("run_id")) if payload.get("run_id") else None
        if announcer is not None:
            announcer.hold_memory_edit(edit)
            return
        for agent_id in edit.agent_ids:
            async_to_sync(_publish_edit)(agent_id, payload)

    transaction.on_commit(send)


async def _publish_edit(agent_id: Any, payload: dict[str, Any]) -> None:
    try:
        await publish(agent_id, [payload])
    except Exception:
        # The edit is committed either way; a tab that missed it reads the block on its next load.
        logger.exception("Could not tell the tabs of agent %s that a block changed", agent_id)
