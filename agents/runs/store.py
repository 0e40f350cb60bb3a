"""The engine's ``ConversationStore`` on the Django models: one agent, one run."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from agents.engine.store import AgentBusyError, MessageDraft, MessageSnapshot, StepRecord
from agents.memory.compaction import store_compaction
from agents.memory.window_cache import WindowShape, context_windows
from agents.models import Agent, Message, Run, Step, StepStatus
from agents.runs import state as run_state

if TYPE_CHECKING:
    from agents.broadcast import EventPublisher
    from agents.engine.events import RunFinishedEvent
    from agents.engine.types import StoredToolReturn
    from agents.llm.base import Usage
    from tools.base import StagedWrite


def lock_ttl() -> timedelta:
    return timedelta(seconds=getattr(settings, "AGENT_TURN_LOCK_SECONDS", 60))


SNAPSHOT_FIELDS = (
    "id",
    "agent_id",
    "seq",
    "role",
    "content",
    "tool_calls",
    "tool_returns",
    "approvals",
    "metadata",
    "otid",
    "name",
    "run_id",
    "step_id",
    "is_err",
    "created_at",
)


class DjangoConversationStore:
    """Persists one run of one agent. Methods are async; each runs its ORM work in one thread hop."""

    def __init__(
        self,
        *,
        agent: Agent,
        run: Run,
        sender_user_id: Any = None,
        sender_api_key_id: Any = None,
        publisher: EventPublisher | None = None,
    ) -> None:
        self.agent = agent
        self.agent_id = agent.id
        self.organization_id = agent.organization_id
        self.run = run
        self.run_id = run.id
        self.sender_user_id = sender_user_id
        self.sender_api_key_id = sender_api_key_id
        self.publisher = publisher
        self._next_seq: int | None = None
        self._lease_renewal: asyncio.Task[None] | None = None

    # --- the turn lease ----------------------------------------------------------------

    def _open(self) -> list[MessageSnapshot]:
        now = timezone.now()
        taken = (
            Agent.objects.filter(pk=self.agent_id)
            .filter(
                Q(turn_lock_run_id__isnull=True) | Q(turn_lock_expires_at__lt=now) | Q(turn_lock_run_id=self.run_id)
            )
            .update(turn_lock_run_id=self.run_id, turn_lock_expires_at=now + lock_ttl())
        )
        if taken != 1:
            raise AgentBusyError(str(self.agent_id))
        return self._context()

    async def open_turn(self) -> list[MessageSnapshot]:
        rows = await sync_to_async(self._open)()
        self._lease_renewal = asyncio.get_running_loop().create_task(self._renew_lease())
        return rows

    async def _renew_lease(self) -> None:
        """Keep the lease (and the run's heartbeat) fresh for the whole turn, model calls included."""
        interval = lock_ttl().total_seconds() / 3
        while True:
            await asyncio.sleep(interval)
            await sync_to_async(run_state.heartbeat)(
                self.run_id, self.agent_id, renew_lease_until=timezone.now() + lock_ttl()
            )

    def _stop_renewal(self) -> None:
        if self._lease_renewal is not None:
            self._lease_renewal.cancel()
            self._lease_renewal = None

    async def heartbeat(self) -> bool:
        return await sync_to_async(run_state.heartbeat)(self.run_id, self.agent_id, renew_lease_until=None)

    def _release(self) -> None:
        Agent.objects.filter(pk=self.agent_id, turn_lock_run_id=self.run_id).update(
            turn_lock_run_id=None, turn_lock_expires_at=None
        )

    async def release_turn_lock(self) -> None:
        self._stop_renewal()
        await sync_to_async(self._release)()

    # --- rows -----------------------------------------------------------------------

    def _context(self) -> list[MessageSnapshot]:
        """The window, read through this process's cache (``agents/context_cache.py``)."""
        last_row = Message.objects.filter(agent_id=OuterRef("pk")).order_by("-seq").values("seq")[:1]
        start, summary, keep, revision, last_seq = (
            Agent.objects.filter(pk=self.agent_id)
            .annotate(last_seq=Subquery(last_row))
            .values_list("context_start_seq", "context_summary_seq", "context_keep_seq", "context_revision", "last_seq")
            .get()
        )
        # The lease keeps other turns from adding rows, so the next ``seq`` needs no query of its own.
        self._next_seq = 0 if last_seq is None else last_seq + 1

        def fetch(after: int | None, through: int) -> list[MessageSnapshot]:
            rows = Message.objects.in_window(self.agent_id, start=start, summary=summary, keep=keep)
            rows = rows.filter(seq__lte=through) if after is None else rows.filter(seq__gt=after, seq__lte=through)
            return [MessageSnapshot(**row) for row in rows.values(*SNAPSHOT_FIELDS)]

        shape = WindowShape(start=start, summary=summary, keep=keep, revision=revision)
        return context_windows.rows(self.agent_id, shape, last_seq, fetch)

    def _compact(
        self, summary: str, keep_from_seq: int, evicted: int, stats: dict[str, Any] | None
    ) -> list[MessageSnapshot]:
        with transaction.atomic():
            store_compaction(
                agent_id=self.agent_id,
                organization_id=self.organization_id,
                run_id=self.run_id,
                seq=self._take_seqs(1),
                summary=summary,
                keep_from_seq=keep_from_seq,
                evicted=evicted,
                stats=stats,
            )
        return self._context()

    async def compact(
        self, *, summary: str, keep_from_seq: int, evicted: int, stats: dict[str, Any] | None = None
    ) -> list[MessageSnapshot]:
        return await sync_to_async(self._compact)(summary, keep_from_seq, evicted, stats)

    def _find_by_otid(self, otid: str) -> MessageSnapshot | None:
        message = Message.objects.filter(agent_id=self.agent_id, otid=otid, role="user").order_by("-seq").first()
        return message.snapshot() if message else None

    async def find_by_otid(self, otid: str) -> MessageSnapshot | None:
        return await sync_to_async(self._find_by_otid)(otid)

    def _rows_after(self, seq: int, limit: int) -> list[MessageSnapshot]:
        return [
            m.snapshot() for m in Message.objects.filter(agent_id=self.agent_id, seq__gt=seq).order_by("seq")[:limit]
        ]

    async def rows_after(self, seq: int, *, limit: int = 200) -> list[MessageSnapshot]:
        return await sync_to_async(self._rows_after)(seq, limit)

    def _take_seqs(self, count: int) -> int:
        """The first of ``count`` new consecutive ``seq`` values of this agent's rows."""
        if self._next_seq is None:
            self._next_seq = Message.objects.next_seq(self.agent_id)
        first = self._next_seq
        self._next_seq += count
        return first

    def _append(self, drafts: list[MessageDraft], write: StagedWrite | None = None) -> list[MessageSnapshot]:
        try:
            return self._insert(drafts, write)
        except Exception:
            self._next_seq = None  # nothing was stored: read the next seq again
            raise

    def _insert(self, drafts: list[MessageDraft], write: StagedWrite | None) -> list[MessageSnapshot]:
        # One INSERT is atomic by itself; a staged write must commit with the rows, or not at all.
        with transaction.atomic() if write is not None else contextlib.nullcontext():
            first = self._take_seqs(len(drafts))
            messages = []
            for offset, draft in enumerate(drafts):
                messages.append(
                    Message(
                        id=draft.id or uuid.uuid4(),
                        organization_id=self.organization_id,
                        agent_id=self.agent_id,
                        seq=first + offset,
                        role=draft.role,
                        content=draft.content,
                        tool_calls=draft.tool_calls,
                        tool_returns=draft.tool_returns,
                        approvals=draft.approvals,
                        metadata=draft.metadata,
                        otid=draft.otid,
                        name=draft.name,
                        run_id=self.run_id,
                        step_id=draft.step_id,
                        is_err=draft.is_err,
                        sender_user_id=self.sender_user_id if draft.role in ("user", "approval") else None,
                        sender_api_key_id=self.sender_api_key_id if draft.role in ("user", "approval") else None,
                    )
                )
            Message.objects.bulk_create(messages)
            if write is not None:
                write(messages[-1].id)
        return [m.snapshot() for m in messages]

    async def append(self, drafts: list[MessageDraft], *, write: StagedWrite | None = None) -> list[MessageSnapshot]:
        return await sync_to_async(self._append)(drafts, write)

    def _set_tool_returns(
        self, message_id: Any, tool_returns: list[StoredToolReturn], write: StagedWrite | None
    ) -> MessageSnapshot:
        with transaction.atomic():
            updated = Message.objects.filter(pk=message_id, agent_id=self.agent_id).update(tool_returns=tool_returns)
            if updated != 1:
                raise Message.DoesNotExist(f"No tool row {message_id} of agent {self.agent_id}")
            if write is not None:
                write(message_id)
        return Message.objects.get(pk=message_id).snapshot()

    async def set_tool_returns(
        self, message_id: Any, tool_returns: list[StoredToolReturn], *, write: StagedWrite | None = None
    ) -> MessageSnapshot:
        return await sync_to_async(self._set_tool_returns)(message_id, tool_returns, write)

    # --- run and steps ----------------------------------------------------------------

    async def finish_run(self, finished: RunFinishedEvent, usage: Usage) -> None:
        self._stop_renewal()
        await run_state.end_run(
            run_pk=self.run_id, agent_pk=self.agent_id, finished=finished, usage=usage, publisher=self.publisher
        )

    def _start_step(self, number: int, model: str) -> Any:
        step = Step.objects.create(
            organization_id=self.organization_id, agent_id=self.agent_id, run_id=self.run_id, number=number, model=model
        )
        return step.id

    async def start_step(self, *, number: int, model: str) -> Any:
        return await sync_to_async(self._start_step)(number, model)

    def _finish_step(self, step_id: Any, record: StepRecord) -> None:
        Step.objects.filter(pk=step_id).update(
            status={"success": StepStatus.SUCCESS, "failed": StepStatus.FAILED}.get(
                record.status, StepStatus.CANCELLED
            ),
            stop_reason=record.stop_reason,
            prompt_tokens=record.usage.prompt_tokens,
            completion_tokens=record.usage.completion_tokens,
            total_tokens=record.usage.total_tokens,
            reasoning_tokens=record.usage.reasoning_tokens,
            cached_tokens=record.usage.cached_tokens,
            usage_estimated=record.usage.estimated,
            llm_ms=record.llm_ms,
            tool_ms=record.tool_ms,
            error=record.error,
            completed_at=timezone.now(),
        )

    async def finish_step(self, step_id: Any, record: StepRecord) -> None:
        await sync_to_async(self._finish_step)(step_id, record)
