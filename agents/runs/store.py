"""The engine's ``ConversationStore`` on the Django models: one agent, one run.

The turn holds its agent through the turn lease (``agents.runs.state`` takes, renews and
releases it), so its rows' ``seq`` values come from one ``SeqRange`` read with the window
when the turn opens. It persists and never announces: ``agents.broadcast`` does, after.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from agents.engine.store import AgentBusyError, MessageDraft, MessageSnapshot, RunEnd, RunStopped, StepRecord
from agents.memory.compaction import store_compaction
from agents.memory.window_cache import WindowShape, context_windows
from agents.models import Agent, Conversation, Message, MessageQuerySet, MessageRole, Run, SeqRange, Step, StepStatus
from agents.runs import state as run_state
from agents.runs import writes

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from agents.engine.events import RunFinishedEvent
    from agents.engine.types import StoredToolCall, StoredToolImage, StoredToolReturn
    from agents.llm.base import Usage
    from tools.base import StagedWrite


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
    "images",
    "run_id",
    "step_id",
    "is_err",
    "created_at",
    "conversation_id",
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
    ) -> None:
        self.agent = agent
        self.agent_id = agent.id
        self.organization_id = agent.organization_id
        self.run = run
        self.run_id = run.id
        # The run's thread: a conversation's, or (None) the agent's default thread.
        self.conversation_id = run.conversation_id
        self._window_key: Any = (
            self.agent_id if self.conversation_id is None else ("conversation", self.conversation_id)
        )
        self.sender_user_id = sender_user_id
        self.sender_api_key_id = sender_api_key_id
        self._seqs: SeqRange | None = None
        self._shape: WindowShape | None = None  # the window's, as this turn read it
        self._prepared: list[MessageSnapshot] | AgentBusyError | None = None
        self._finished_step: tuple[Any, StepRecord, datetime] | None = None
        # Whether the run is known not to be asked to stop a moment ago: created running by this request
        # (``run.opened_from``: nobody had its id), or a write guarded by the check has just gone through.
        self._checked = False
        # The run's end, recorded with the turn's last rows (``end_with``): whether it counted.
        self._ended: bool | None = None
        self._renewal = run_state.LeaseRenewal(
            agent_id=self.agent_id, run_id=self.run_id, conversation_id=self.conversation_id
        )

    # --- the turn lease ----------------------------------------------------------------

    def _open(self) -> list[MessageSnapshot]:
        held = self.run.opened_from
        if held is not None:
            # Created running by this request, its lease taken and its thread read under the row lock.
            self.run.opened_from = None
            self._checked = True
            return self._window(
                held.context_start_seq,
                held.context_summary_seq,
                held.context_keep_seq,
                held.context_revision,
                held.seqs.last,
            )
        if not run_state.take_lease(self.agent_id, self.run_id, self.conversation_id):
            raise AgentBusyError(str(self.agent_id))
        return self._context()

    def prepare(self) -> None:
        """Open the turn now, in the caller's thread (the one that read the turn's collaborators), so
        ``open_turn`` costs no thread hop of its own; it answers (or raises) what this found."""
        try:
            self._prepared = self._open()
        except AgentBusyError as busy:
            self._prepared = busy

    async def open_turn(self) -> list[MessageSnapshot]:
        prepared, self._prepared = self._prepared, None
        if isinstance(prepared, AgentBusyError):
            raise prepared
        rows = prepared if prepared is not None else await sync_to_async(self._open)()
        self._renewal.start()
        return rows

    async def heartbeat(self, *, fresh: bool = False) -> bool:
        if self._checked and not fresh:
            # Checked a moment ago: by the write just guarded with the check (the model's answer, a
            # step's start), or the run was created running by this request (no caller had its id).
            self._checked = False
            return False
        self._checked = False
        return await sync_to_async(run_state.heartbeat)(self.run_id, self.agent_id, renew=False)

    def _release(self) -> None:
        release = run_state.release_lease_write(self.agent_id, self.run_id, self.conversation_id)
        writes.write_together([*self._finished_step_writes(), release])

    async def release_turn_lock(self) -> None:
        self._renewal.stop()
        await sync_to_async(self._release)()

    # --- rows -----------------------------------------------------------------------

    def _context(self) -> list[MessageSnapshot]:
        """The window, read through this process's cache (``agents.memory.window_cache``)."""
        return self._window(*self._window_pointers())

    def _window(
        self, start: int, summary: int | None, keep: int | None, revision: int, last_seq: int | None
    ) -> list[MessageSnapshot]:
        # The lease holds the agent for this turn (every other writer finds it busy under its row
        # lock: ``Agent.objects.hold``), so the next ``seq`` needs no query of its own.
        self._seqs = SeqRange(last_seq)

        def fetch(after: int | None, through: int) -> list[MessageSnapshot]:
            rows = Message.objects.in_window(
                self.agent_id, conversation_id=self.conversation_id, start=start, summary=summary, keep=keep
            )
            rows = rows.filter(seq__lte=through) if after is None else rows.filter(seq__gt=after, seq__lte=through)
            return [MessageSnapshot(**row) for row in rows.values(*SNAPSHOT_FIELDS)]

        self._shape = WindowShape(start=start, summary=summary, keep=keep, revision=revision)
        return context_windows.rows(self._window_key, self._shape, last_seq, fetch)

    def _window_pointers(self) -> tuple[int, int | None, int | None, int, int | None]:
        """The thread's window pointers, the agent's ``context_revision`` and the thread's last ``seq``."""
        pointers = ("context_start_seq", "context_summary_seq", "context_keep_seq")
        if self.conversation_id is None:
            last_row = Message.objects.filter(agent_id=OuterRef("pk"), conversation__isnull=True)
            return tuple(
                Agent.objects.filter(pk=self.agent_id)
                .annotate(last_seq=Subquery(last_row.order_by("-seq").values("seq")[:1]))
                .values_list(*pointers, "context_revision", "last_seq")
                .get()
            )
        last_row = Message.objects.filter(conversation_id=OuterRef("pk"))
        return tuple(
            Conversation.objects.filter(pk=self.conversation_id)
            .annotate(last_seq=Subquery(last_row.order_by("-seq").values("seq")[:1]))
            .values_list(*pointers, "agent__context_revision", "last_seq")
            .get()
        )

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
                conversation_id=self.conversation_id,
            )
        return self._context()

    async def compact(
        self, *, summary: str, keep_from_seq: int, evicted: int, stats: dict[str, Any] | None = None
    ) -> list[MessageSnapshot]:
        return await sync_to_async(self._compact)(summary, keep_from_seq, evicted, stats)

    def _find_by_otid(self, otid: str) -> MessageSnapshot | None:
        message = self._thread_rows().filter(otid=otid, role="user").order_by("-seq").first()
        return message.snapshot() if message else None

    async def find_by_otid(self, otid: str) -> MessageSnapshot | None:
        return await sync_to_async(self._find_by_otid)(otid)

    def _rows_after(self, seq: int, limit: int) -> list[MessageSnapshot]:
        return [m.snapshot() for m in self._thread_rows().filter(seq__gt=seq).order_by("seq")[:limit]]

    async def rows_after(self, seq: int, *, limit: int = 200) -> list[MessageSnapshot]:
        return await sync_to_async(self._rows_after)(seq, limit)

    def _thread_rows(self) -> MessageQuerySet:
        return Message.objects.in_thread(self.agent_id, self.conversation_id)

    def _take_seqs(self, count: int) -> int:
        """The first of ``count`` new consecutive ``seq`` values of this thread's rows."""
        if self._seqs is None:  # not read with a window yet, or a failed insert: read it again
            with transaction.atomic():
                self._seqs = Agent.objects.hold(self.agent_id, self.conversation_id).seqs
        return self._seqs.take(count)

    def _append(
        self, drafts: list[MessageDraft], write: StagedWrite | None = None, *, unless_stopped: bool = False
    ) -> list[MessageSnapshot]:
        try:
            if unless_stopped:
                assert write is None, "a staged write commits in its own transaction"
                messages = self._messages(drafts)
                sent, _ = writes.write_together([writes.insert(messages)], unless_cancelled=self.run_id)
                if not sent:
                    self._give_back(messages)
                    raise RunStopped(str(self.run_id))
                self._checked = True
            else:
                messages = self._insert(drafts, write)
        except RunStopped:
            raise
        except Exception:
            self._seqs = None  # nothing was stored: read the next seq again
            raise
        return self._stored(messages)

    def _messages(self, drafts: Sequence[MessageDraft]) -> list[Message]:
        """The rows of ``drafts``, with their ``seq`` values taken (not stored yet)."""
        first = self._take_seqs(len(drafts))
        return [
            Message(
                id=draft.id or uuid.uuid4(),
                organization_id=self.organization_id,
                agent_id=self.agent_id,
                conversation_id=self.conversation_id,
                seq=first + offset,
                role=draft.role,
                content=draft.content,
                tool_calls=draft.tool_calls,
                tool_returns=draft.tool_returns,
                approvals=draft.approvals,
                metadata=draft.metadata,
                otid=draft.otid,
                name=draft.name,
                images=draft.images,
                run_id=self.run_id,
                step_id=draft.step_id,
                is_err=draft.is_err,
                sender_user_id=self.sender_user_id if draft.role in ("user", "approval") else None,
                sender_api_key_id=self.sender_api_key_id if draft.role in ("user", "approval") else None,
            )
            for offset, draft in enumerate(drafts)
        ]

    def _give_back(self, messages: list[Message]) -> None:
        """Nothing was written: the next rows take these rows' ``seq`` values."""
        if messages:
            self._seqs = SeqRange(messages[0].seq - 1)

    def _insert(self, drafts: list[MessageDraft], write: StagedWrite | None) -> list[Message]:
        # One INSERT is atomic by itself; a staged write must commit with the rows, or not at all.
        with transaction.atomic() if write is not None else contextlib.nullcontext():
            messages = self._messages(drafts)
            if len(messages) == 1:
                messages[0].save(force_insert=True)  # ``bulk_create`` would wrap even one row in a transaction
            else:
                Message.objects.bulk_create(messages)
            if write is not None:
                write(messages[-1].id)
        return messages

    def _stored(self, messages: list[Message]) -> list[MessageSnapshot]:
        """The snapshots of rows just stored, added to this process's window."""
        rows = [m.snapshot() for m in messages]
        if self._shape is not None:
            context_windows.extend(self._window_key, self._shape, rows)
        return rows

    async def append(
        self, drafts: list[MessageDraft], *, write: StagedWrite | None = None, unless_stopped: bool = False
    ) -> list[MessageSnapshot]:
        return await sync_to_async(self._append)(drafts, write, unless_stopped=unless_stopped)

    def _set_tool_returns(
        self,
        message_id: Any,
        tool_returns: list[StoredToolReturn],
        write: StagedWrite | None,
        images: list[StoredToolImage] | None,
    ) -> MessageSnapshot:
        changes: dict[str, Any] = (
            {"tool_returns": tool_returns} if images is None else {"tool_returns": tool_returns, "images": images}
        )
        with transaction.atomic():
            updated = Message.objects.filter(pk=message_id, agent_id=self.agent_id).update(**changes)
            if updated != 1:
                raise Message.DoesNotExist(f"No tool row {message_id} of agent {self.agent_id}")
            if write is not None:
                write(message_id)
        return Message.objects.get(pk=message_id).snapshot()

    async def set_tool_returns(
        self,
        message_id: Any,
        tool_returns: list[StoredToolReturn],
        *,
        write: StagedWrite | None = None,
        images: list[StoredToolImage] | None = None,
    ) -> MessageSnapshot:
        return await sync_to_async(self._set_tool_returns)(message_id, tool_returns, write, images)

    def _set_tool_calls(self, message_id: Any, tool_calls: list[StoredToolCall]) -> MessageSnapshot:
        updated = Message.objects.filter(pk=message_id, agent_id=self.agent_id, role=MessageRole.ASSISTANT).update(
            tool_calls=tool_calls
        )
        if updated != 1:
            raise Message.DoesNotExist(f"No assistant row {message_id} of agent {self.agent_id}")
        return Message.objects.get(pk=message_id).snapshot()

    async def set_tool_calls(self, message_id: Any, tool_calls: list[StoredToolCall]) -> MessageSnapshot:
        return await sync_to_async(self._set_tool_calls)(message_id, tool_calls)

    # --- run and steps ----------------------------------------------------------------

    async def finish_run(self, finished: RunFinishedEvent, usage: Usage) -> None:
        self._renewal.stop()
        if self._ended is not None:  # recorded already, with the turn's last rows (``end_with``)
            ended, self._ended = self._ended, None
            if ended:
                await run_state.announce_end(self.agent_id, finished, conversation_id=self.conversation_id)
            return
        await run_state.end_run(
            run_pk=self.run_id,
            agent_pk=self.agent_id,
            finished=finished,
            usage=usage,
            conversation_id=self.conversation_id,
            also=self._finished_step_writes(),
        )

    def _end_with(
        self, drafts: list[MessageDraft], step_id: Any, record: StepRecord, end: RunEnd, unless_stopped: bool
    ) -> list[MessageSnapshot]:
        messages = self._messages(drafts)
        verdict = run_state.end_writes(
            self.run_id,
            self.agent_id,
            self.conversation_id,
            stop_reason=end.stop_reason,
            usage=end.usage,
            step_count=end.step_count,
            error=end.error,
        )
        try:
            sent, counts = writes.write_together(
                [
                    writes.insert(messages),
                    *self._finished_step_writes(keep=True),
                    self._step_end(step_id, record, timezone.now()),
                    *verdict,
                ],
                unless_cancelled=self.run_id if unless_stopped else None,
            )
        except Exception:
            self._seqs = None
            raise
        if not sent:
            self._give_back(messages)
            raise RunStopped(str(self.run_id))
        self._finished_step = None
        self._ended = counts[-1] == 1
        return self._stored(messages)

    async def end_with(
        self,
        drafts: list[MessageDraft],
        *,
        step_id: Any,
        record: StepRecord,
        end: RunEnd,
        unless_stopped: bool = False,
    ) -> list[MessageSnapshot]:
        return await sync_to_async(self._end_with)(drafts, step_id, record, end, unless_stopped)

    def _start_step(
        self, number: int, model: str, drafts: Sequence[MessageDraft]
    ) -> tuple[Any, list[MessageSnapshot]] | None:
        # The previous step's end, this step's row and the turn's input: one statement, unless the
        # run has been asked to stop (then nothing is written, and the previous step's end waits).
        step = Step(
            organization_id=self.organization_id,
            agent_id=self.agent_id,
            run_id=self.run_id,
            number=number,
            model=model,
        )
        messages = self._messages(drafts) if drafts else []
        parts = [*self._finished_step_writes(keep=True), writes.insert([step])]
        try:
            sent, _ = writes.write_together(
                [*parts, writes.insert(messages)] if messages else parts, unless_cancelled=self.run_id
            )
        except Exception:
            self._seqs = None
            raise
        if not sent:
            self._give_back(messages)
            return None
        self._finished_step = None
        self._checked = True
        return step.id, self._stored(messages)

    async def start_step(
        self, *, number: int, model: str, drafts: Sequence[MessageDraft] = ()
    ) -> tuple[Any, list[MessageSnapshot]] | None:
        return await sync_to_async(self._start_step)(number, model, drafts)

    def _finished_step_writes(self, *, keep: bool = False) -> list[writes.Write]:
        """The end of the last finished step, kept since ``finish_step``, as a write to send with the
        next ones (forgotten unless ``keep``: the caller forgets it once they are sent)."""
        if self._finished_step is None:
            return []
        step_id, record, completed_at = self._finished_step
        if not keep:
            self._finished_step = None
        return [self._step_end(step_id, record, completed_at)]

    @staticmethod
    def _step_end(step_id: Any, record: StepRecord, completed_at: datetime) -> writes.Write:
        statuses = {"success": StepStatus.SUCCESS, "failed": StepStatus.FAILED}
        return writes.update_rows(
            Step,
            {"pk": step_id},
            status=statuses.get(record.status, StepStatus.CANCELLED),
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
            completed_at=completed_at,
        )

    async def finish_step(self, step_id: Any, record: StepRecord) -> None:
        # Kept for the next write: the next step's start, or the run's end (``finish_run``).
        self._finished_step = (step_id, record, timezone.now())
