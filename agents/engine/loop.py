"""The agent loop: one turn of one agent, as an async stream of typed events.

``start_turn`` validates the input against the conversation's state and takes
the agent's lock, raising domain errors before anything is streamed;
``Turn.events()`` then runs: persist the input → loop { build the request →
call the model → persist the assistant row → stop for approval, or run the
calls and persist their returns → decide whether to continue } → finish.
Every row is committed before its event is yielded.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agents.engine import approvals as approval_rules
from agents.engine.batch import BatchCancelled, BatchPaused, BatchRunner, repair_interrupted_batch
from agents.engine.collaborators import TurnCollaborators
from agents.engine.compaction import CompactionFailed, is_summary
from agents.engine.completion import StepOutput, delta_event
from agents.engine.context import build_step_request
from agents.engine.events import (
    EngineEvent,
    MessageEvent,
    RunFinishedEvent,
    TurnUsage,
)
from agents.engine.inputs import ApprovalInput, TurnInput, UserInput
from agents.engine.rules import StepFacts, decide_after_step, step_notice
from agents.engine.state import calls_this_turn, check_turn_input
from agents.engine.stop import StopReason, stop_reason_for
from agents.engine.store import AgentBusyError, MessageDraft, MessageSnapshot, RunEnd, RunStopped, StepRecord
from agents.engine.usage import UsageTally
from agents.engine.window import ContextWindow
from agents.errors import AgentBusy
from agents.llm.base import LLMContextWindowExceeded, LLMError, LLMRequest, Usage
from agents.llm.tokens import estimate_usage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence


logger = logging.getLogger(__name__)

CANCEL_POLL_SECONDS = 0.3
MAX_COMPACTIONS_PER_STEP = 3
INTERRUPTED_ERROR = "The run was interrupted before it finished."


class _Finish(Exception):
    def __init__(self, stop_reason: StopReason, error: str | None = None) -> None:
        super().__init__(stop_reason)
        self.stop_reason = stop_reason
        self.error = error


async def start_turn(collab: TurnCollaborators, turn_input: TurnInput, *, stream_tokens: bool = False) -> Turn:
    """Lock the agent, check the input against its state, and return the turn to run.

    Raises ``AgentBusy``, ``PendingApprovalConflict``, ``NoPendingApproval`` or
    ``InvalidToolCallIds`` before anything is persisted or streamed.
    """
    store = collab.store
    try:
        rows = await store.open_turn()
    except AgentBusyError:
        raise AgentBusy() from None
    try:
        rows = await repair_interrupted_batch(store, rows)
        turn = Turn(collab, rows, turn_input, stream_tokens=stream_tokens)
        await turn.validate()
    except BaseException:
        await store.release_turn_lock()
        raise
    return turn


class Turn:
    def __init__(
        self, collab: TurnCollaborators, rows: list[MessageSnapshot], turn_input: TurnInput, *, stream_tokens: bool
    ) -> None:
        self.collab = collab
        self.store = collab.store
        self.rows = rows
        self.input = turn_input
        self.stream_tokens = stream_tokens
        self.specs = {spec.name: spec for spec in collab.tools}
        self.run_id = collab.store.run_id
        self._seq = 0
        self.tally = UsageTally()
        self._steps = 0
        self._decisions: list[approval_rules.Decision] = []
        self._pending: approval_rules.PendingBatch | None = None
        self._retry_user_row: MessageSnapshot | None = None
        self._replay_rows: list[MessageSnapshot] = []
        self._last_cancel_check = 0.0
        self._interruption: tuple[StopReason, str] | None = None
        self._recorded_end: StopReason | None = None  # the run's end, stored with the turn's last rows
        self.window = ContextWindow(
            store=collab.store, llm=collab.llm, settings=collab.settings, rows=self.rows, add_usage=self.tally.add
        )
        self.batches = BatchRunner(
            store=collab.store,
            tool_runner=collab.tool_runner,
            specs=self.specs,
            rules=collab.rules,
            tool_context=collab.tool_context,
            rows=self.rows,
            cancel_requested=lambda: self._cancel_requested(force=True),
        )

    def interrupt(self, stop_reason: StopReason, error: str) -> None:
        """Say why the task running this turn is about to be cancelled, so the run ends with that reason."""
        self._interruption = (stop_reason, error)

    # --- validation ------------------------------------------------------------

    async def validate(self) -> None:
        self._pending = approval_rules.pending_approval(self.rows)
        self._decisions = check_turn_input(self.rows, self.input, specs=self.specs)
        if not isinstance(self.input, list):
            return
        for item in self.input:
            if item.otid:
                existing = await self.store.find_by_otid(item.otid)
                if existing is not None and await self._plan_resend(existing):
                    return

    async def _plan_resend(self, existing: MessageSnapshot) -> bool:
        """A message already stored under this otid: if it is still the latest input, retry its
        failed turn or replay its answer (seed 003) and say so. Once another input followed it
        (a message, an approval), the same otid names a new message (seed 000 reuses one)."""
        after = await self.store.rows_after(existing.seq)
        if any(row.role in ("user", "approval") and not is_summary(row) for row in after):
            return False
        if after:
            self._replay_rows = after
        else:
            self._retry_user_row = existing
        return True

    # --- events ------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _message(self, row: MessageSnapshot, *, streamed: bool = False) -> MessageEvent:
        return MessageEvent(run_id=self.run_id, seq=self._next_seq(), message=row, streamed=streamed)

    async def events(self) -> AsyncIterator[EngineEvent]:
        """The turn's events; the last is always ``RunFinishedEvent``, recorded before it is yielded."""
        stop_reason, error = StopReason.END_TURN, None
        try:
            async for event in self._run():
                yield event
        except _Finish as finish:
            stop_reason, error = finish.stop_reason, finish.error
        except Exception as exc:
            logger.exception("Run %s failed", self.run_id)
            stop_reason, error = StopReason.ERROR, f"{type(exc).__name__}: {exc}"
        except asyncio.CancelledError:
            if self._interruption is None:
                stop_reason, error = StopReason.CANCELLED, INTERRUPTED_ERROR
                raise
            # Cancelled on purpose (``interrupt``): the turn ends with the reason given, as any other end.
            stop_reason, error = self._interruption
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        except BaseException:
            # The consumer closed the stream: never a clean end.
            stop_reason, error = StopReason.CANCELLED, INTERRUPTED_ERROR
            raise
        else:
            stop_reason = self._stop_reason
        finally:
            if self._recorded_end is not None:  # recorded already: that is the verdict, whatever came after
                stop_reason, error = self._recorded_end, None
            pending = (
                approval_rules.pending_approval(self.rows) if stop_reason == StopReason.REQUIRES_APPROVAL else None
            )
            finished = RunFinishedEvent(
                run_id=self.run_id,
                seq=self._next_seq(),
                stop_reason=stop_reason,
                usage=self.usage,
                error=error,
                awaiting_approval=pending.message if pending else None,
            )
            try:
                await self.store.finish_run(finished, self.tally.total)
            except BaseException:
                await self.store.release_turn_lock()
                raise
        yield finished

    @property
    def usage(self) -> TurnUsage:
        return self.tally.for_run(step_count=self._steps)

    async def _run(self) -> AsyncIterator[EngineEvent]:
        self._stop_reason = StopReason.END_TURN
        if self._replay_rows:
            for row in self._replay_rows:
                yield self._message(row)
            return
        if isinstance(self.input, ApprovalInput) and self._decisions:
            async for event in self._answer_approvals(self.input.follow_ups):
                yield event
        elif isinstance(self.input, ApprovalInput):
            # A resend of an answer applied already (Letta's retry rule): its messages, or Letta's keep-alive.
            keep_alive = (UserInput(approval_rules.KEEP_ALIVE_TEXT),)
            for event in await self._user_messages(self.input.follow_ups or keep_alive):
                yield event
        opening: list[MessageDraft] = []
        if isinstance(self.input, list) and self._retry_user_row is None:
            opening = self._user_drafts(self.input)  # stored with the first step, in one transaction
        async for event in self._steps_loop(opening):
            yield event

    def _user_drafts(self, items: Sequence[UserInput]) -> list[MessageDraft]:
        return [
            MessageDraft(role="user", content=[{"type": "text", "text": item.text}], otid=item.otid, **self._sender())
            for item in items
        ]

    async def _user_messages(self, items: Sequence[UserInput]) -> list[MessageEvent]:
        drafts = self._user_drafts(items)
        return [self._message(row) for row in await self._append(drafts)] if drafts else []

    def _sender(self) -> dict[str, Any]:
        return {"metadata": {"sender": self.collab.sender}} if self.collab.sender else {}

    async def _append(self, drafts: list[MessageDraft], *, unless_stopped: bool = False) -> list[MessageSnapshot]:
        rows = await self.store.append(drafts, unless_stopped=unless_stopped)
        self.rows.extend(rows)
        return rows

    # --- approvals -----------------------------------------------------------------

    async def _answer_approvals(self, follow_ups: Sequence[UserInput]) -> AsyncIterator[EngineEvent]:
        """Apply the decisions (no model call), then store the user messages sent after them: the
        next step's model sees the calls, their results, then the messages (LETTA_CONVERSATIONS §2).
        The messages are stored even when a terminal tool ends the turn here, so none is lost."""
        assert self._pending is not None
        decided_at = datetime.now(UTC)
        author = self.collab.author
        [approval_row] = await self._append(
            [
                MessageDraft(
                    role="approval",
                    approvals=[d.as_json(author, decided_at) for d in self._decisions],
                    **self._sender(),
                )
            ]
        )
        for decision in self._decisions:
            if decision.always_allow and self.collab.allow_always is not None:
                await self.collab.allow_always(decision.tool_name)
        yield self._message(approval_row)
        tool_row = await self._run_batch(self._pending.message, {d.tool_call_id: d for d in self._decisions})
        yield self._message(tool_row)
        for event in await self._user_messages(follow_ups):
            yield event
        again = await self.batches.ask_again(self._pending.message.step_id)
        if again is not None:  # a call asked the person for input again: it waits for the answer
            yield self._message(again)
            raise _Finish(StopReason.REQUIRES_APPROVAL)
        if self.batches.terminal_tool_ran(tool_row):
            raise _Finish(StopReason.TOOL_RULE)

    # --- the step loop ---------------------------------------------------------------

    async def _steps_loop(self, opening: list[MessageDraft]) -> AsyncIterator[EngineEvent]:
        """The steps; ``opening`` (the turn's user rows) is stored with the first step's start. A step's
        start checks for a cancel as it writes (``start_step``), and so does the answer (``_persist_answer``)."""
        max_steps = max(1, self.collab.settings.max_steps)
        truncations = 0
        while True:
            started = await self._next_step(opening, max_steps)
            if started is None:
                for row in await self._append(opening) if opening else []:
                    yield self._message(row)  # asked to stop before the first step: the input is kept all the same
                raise _Finish(StopReason.CANCELLED)
            self._steps += 1
            step_id, rows = started
            opening = []
            self.rows.extend(rows)
            for row in rows:
                yield self._message(row)
            outcome = StepOutput(message_id=uuid.uuid4())
            llm_started = time.monotonic()
            try:
                async for event in self._call_model(outcome, step_id):
                    yield event
            except _Finish as finish:
                await self.store.finish_step(
                    step_id,
                    StepRecord(
                        status="cancelled" if finish.stop_reason == StopReason.CANCELLED else "failed",
                        usage=outcome.usage,
                        llm_ms=_ms_since(llm_started),
                        stop_reason=finish.stop_reason,
                        error={"message": finish.error} if finish.error else None,
                    ),
                )
                raise
            llm_ms = _ms_since(llm_started)
            before = self.tally.total
            self.tally.add(outcome.usage)
            truncated = outcome.finish_reason == "length"
            if truncated:
                truncations += 1
                outcome.tool_calls.clear()
            required = tuple(self._uncalled_required()) if not outcome.tool_calls and not truncated else ()
            notice = step_notice(truncated=truncated, uncalled_required=required)
            draft = outcome.draft(step_id, specs=self.specs, notice=notice, streamed=self.stream_tokens)
            facts = self._facts(draft, truncated=truncated, truncations=truncations, required=required)
            last = None if draft.tool_calls else decide_after_step(facts)
            try:
                assistant = await self._persist_answer(draft, step_id, last, outcome.usage, llm_ms)
            except RunStopped:
                self.tally.total = before  # the answer is not kept, nor counted
                raise _Finish(StopReason.CANCELLED) from None
            yield self._message(assistant, streamed=self.stream_tokens)
            if last is not None:
                self._stop_reason = last
                return

            terminal_ran, tool_ms, awaits_approval = False, None, facts.awaits_approval
            if assistant.tool_calls and not awaits_approval:
                tool_started = time.monotonic()
                answered = await self._run_free_calls(assistant)  # the tool row, and a row asking the person
                tool_ms, awaits_approval = _ms_since(tool_started), answered[-1].role == "assistant"
                for row in answered:
                    yield self._message(row)
                terminal_ran = self.batches.terminal_tool_ran(answered[0])
            stop = decide_after_step(replace(facts, terminal_tool_ran=terminal_ran, awaits_approval=awaits_approval))
            await self.store.finish_step(
                step_id,
                StepRecord(
                    status="success", usage=outcome.usage, llm_ms=llm_ms, tool_ms=tool_ms, stop_reason=stop or ""
                ),
            )
            if stop is not None:
                self._stop_reason = stop
                return

    async def _next_step(self, opening: list[MessageDraft], max_steps: int) -> tuple[Any, list[MessageSnapshot]] | None:
        """Start the next step, with ``opening``; ``None``: asked to stop. ``_Finish`` after ``max_steps``."""
        if self._steps < max_steps:
            model = self.collab.settings.handle
            return await self.store.start_step(number=self._steps + 1, model=model, drafts=opening)
        if not await self._cancel_requested(force=True):
            raise _Finish(StopReason.MAX_STEPS)
        return None

    def _facts(self, draft: MessageDraft, *, truncated: bool, truncations: int, required: tuple[str, ...]) -> StepFacts:
        """What the step's answer says about what comes next (before its batch, if any, ran)."""
        return StepFacts(
            truncated=truncated,
            truncations=truncations,
            has_tool_calls=bool(draft.tool_calls),
            awaits_approval=any(c.get("requires_approval") for c in draft.tool_calls),
            terminal_tool_ran=False,
            uncalled_required=required,
            steps=self._steps,
            max_steps=max(1, self.collab.settings.max_steps),
        )

    async def _persist_answer(
        self, draft: MessageDraft, step_id: Any, last: StopReason | None, usage: Usage, llm_ms: int
    ) -> MessageSnapshot:
        """Store the answer, with the step's and the run's end when it ends the turn (``last``). Unless
        streamed, nothing is stored once the run was asked to stop: the step ends cancelled, ``RunStopped``."""
        guarded = not self.stream_tokens
        try:
            if last is None:
                [row] = await self._append([draft], unless_stopped=guarded)
                return row
            [row] = await self.store.end_with(
                [draft],
                step_id=step_id,
                record=StepRecord(status="success", usage=usage, llm_ms=llm_ms, stop_reason=last),
                end=RunEnd(stop_reason=last, usage=self.tally.total, step_count=self._steps),
                unless_stopped=guarded,
            )
        except RunStopped:
            await self.store.finish_step(step_id, StepRecord("cancelled", usage, llm_ms, stop_reason="cancelled"))
            raise
        self._recorded_end = last
        self.rows.append(row)
        return row

    def _available(self) -> set[str]:
        return set(self.specs)

    def _uncalled_required(self) -> list[str]:
        return self.collab.rules.uncalled_required(calls_this_turn(self.rows), self._available())

    async def _cancel_requested(self, *, force: bool = False, fresh: bool = False) -> bool:
        """Whether the run was asked to stop: at most every ``CANCEL_POLL_SECONDS`` unless ``force``;
        ``fresh`` while the model answers (the store's last check is older than the call)."""
        now = time.monotonic()
        if not force and now - self._last_cancel_check < CANCEL_POLL_SECONDS:
            return False
        self._last_cancel_check = now
        return await self.store.heartbeat(fresh=fresh)

    async def _call_model(self, out: StepOutput, step_id: Any) -> AsyncIterator[EngineEvent]:
        """Call the model for this step, compacting the context first when the request would not fit
        (or once more when the provider says the prompt is too long, before anything streamed)."""
        request = await self._request()
        for _ in range(MAX_COMPACTIONS_PER_STEP):
            summary = await self._compact(request) if self.window.over_budget(request) else None
            if summary is None:
                break  # it fits, or nothing is left to evict: the provider decides
            yield self._message(summary)
            request = await self._request()
        retried = False
        while True:
            try:
                async for llm_event in self.collab.llm.generate(request, stream=self.stream_tokens):
                    delta = out.absorb(llm_event, self.specs)
                    if delta is not None and self.stream_tokens:
                        yield delta_event(delta, self.run_id, self._next_seq(), out.message_id, step_id)
                    if self.stream_tokens and await self._cancel_requested(fresh=True):
                        raise _Finish(StopReason.CANCELLED)
                break
            except LLMContextWindowExceeded as exc:
                fresh = not retried and not out.parts and not out.tool_calls
                summary = await self._compact(overflowed=True) if fresh else None
                if summary is None:
                    raise _Finish(StopReason.INVALID_LLM_RESPONSE, str(exc)) from exc
                yield self._message(summary)
                retried = True
                request = await self._request()
            except _Finish:
                raise
            except LLMError as exc:
                raise _Finish(stop_reason_for(exc), str(exc)) from exc
            except Exception as exc:
                logger.warning("Model call failed for run %s: %s", self.run_id, exc, exc_info=True)
                raise _Finish(StopReason.INVALID_LLM_RESPONSE, f"{type(exc).__name__}: {exc}") from exc
        problem = out.problem()
        if problem:
            raise _Finish(StopReason.INVALID_LLM_RESPONSE, problem)
        if out.usage.prompt_tokens == 0 and out.usage.completion_tokens == 0:
            out.usage = estimate_usage(request, len(out.text) + sum(len(c["arguments"]) for c in out.tool_calls))
        self.window.record(out.usage)

    # --- the context window ------------------------------------------------------------

    async def _request(self) -> LLMRequest:
        allowed = self._allowed_tools()
        return await build_step_request(self.rows, self.collab.tools, self.collab.settings, allowed=allowed)

    async def _compact(self, request: LLMRequest | None = None, *, overflowed: bool = False) -> MessageSnapshot | None:
        try:
            return await self.window.compact(request, overflowed=overflowed)
        except CompactionFailed as failed:
            raise _Finish(failed.stop_reason, failed.error) from failed

    def _allowed_tools(self) -> set[str]:
        called = calls_this_turn(self.rows)
        return {
            name for name in self._available() if self.collab.rules.violation(name, called, self._available()) is None
        }

    # --- running a batch of tool calls ---------------------------------------------------

    async def _run_free_calls(self, assistant: MessageSnapshot) -> list[MessageSnapshot]:
        """The calls of a step that needs no approval: their tool row, then the row asking again what a call
        asked the person (``tools.elicitation``), if any; or, when the first call asked, the step's assistant
        row again, that call now waiting for an answer."""
        try:
            tool_row = await self._run_batch(assistant, {})
        except BatchPaused as paused:
            return [paused.assistant]
        again = await self.batches.ask_again(assistant.step_id)
        return [tool_row, again] if again is not None else [tool_row]

    async def _run_batch(
        self, assistant: MessageSnapshot, decisions: dict[str, approval_rules.Decision]
    ) -> MessageSnapshot:
        try:
            return await self.batches.run(assistant, decisions)
        except BatchCancelled:
            raise _Finish(StopReason.CANCELLED) from None


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
