"""The agent loop: one turn of one agent, as an async stream of typed events.

``start_turn`` validates the input against the conversation's state and takes
the agent's lock, raising domain errors before anything is streamed;
``Turn.events()`` then runs: persist the input → loop { build the request →
call the model → persist the assistant row → stop for approval, or run the
calls and persist their returns → decide whether to continue } → finish.
Every row is committed before its event is yielded.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.engine import approvals as approval_rules
from agents.engine.completion import StepOutput, clean_arguments, delta_event, is_gated
from agents.engine.context import ModelSettings, build_request, estimate_tokens
from agents.engine.events import (
    EngineEvent,
    MessageEvent,
    RunFinishedEvent,
    TurnUsage,
)
from agents.engine.inputs import ApprovalInput, TurnInput
from agents.engine.rules import ToolRules
from agents.engine.state import calls_this_turn, check_turn_input, missing_results
from agents.engine.store import AgentBusyError, MessageDraft, MessageSnapshot, StepRecord
from agents.errors import AgentBusy
from agents.llm.base import (
    LLMError,
    LLMInvalidResponse,
    Usage,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from agents.engine.store import ConversationStore
    from agents.llm.base import LLMClient
    from tools.base import ToolContext, ToolRunner, ToolSpec

logger = logging.getLogger(__name__)

MAX_TRUNCATION_CONTINUES = 2
CANCEL_POLL_SECONDS = 0.3
TRUNCATION_NOTICE = (
    "[System notice] Your previous answer was cut off at the output limit and any tool call in it was "
    "dropped. Continue exactly where you stopped; re-issue a tool call if you still need it."
)
INTERRUPTED_RESULT = "Error: the tool call was interrupted before it finished; its outcome is unknown."
CANCELLED_RESULT = "Error: the run was cancelled before this tool call ran."


@dataclass
class TurnCollaborators:
    store: ConversationStore
    llm: LLMClient
    tool_runner: ToolRunner
    tools: list[ToolSpec]
    settings: ModelSettings
    rules: ToolRules
    tool_context: ToolContext
    sender: dict[str, Any] = field(default_factory=dict)


class _Finish(Exception):
    def __init__(self, stop_reason: str, error: str | None = None) -> None:
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
        rows = await _repair_interrupted_batch(store, rows)
        turn = Turn(collab, rows, turn_input, stream_tokens=stream_tokens)
        await turn.validate()
    except BaseException:
        await store.release_turn_lock()
        raise
    return turn


async def _repair_interrupted_batch(store: ConversationStore, rows: list[MessageSnapshot]) -> list[MessageSnapshot]:
    """Give every call of a batch cut off by a crash a synthetic error result, so the context stays valid."""
    broken = missing_results(rows)
    if broken is None:
        return rows
    _, tool_row, missing = broken
    synthetic = [
        {
            "tool_call_id": c["id"],
            "name": c["name"],
            "status": "error",
            "tool_return": INTERRUPTED_RESULT,
            "func_response": INTERRUPTED_RESULT,
            "stdout": None,
            "stderr": None,
        }
        for c in missing
    ]
    if tool_row is not None:
        updated = await store.set_tool_returns(tool_row.id, [*tool_row.tool_returns, *synthetic])
        return [updated if r.id == tool_row.id else r for r in rows]
    [created] = await store.append([MessageDraft(role="tool", tool_returns=synthetic, is_err=True)])
    return [*rows, created]


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
        self._usage = Usage()
        self._estimated = False
        self._steps = 0
        self._decisions: list[approval_rules.Decision] = []
        self._pending: approval_rules.PendingBatch | None = None
        self._retry_user_row: MessageSnapshot | None = None
        self._replay_rows: list[MessageSnapshot] = []
        self._last_cancel_check = 0.0

    # --- validation ------------------------------------------------------------

    async def validate(self) -> None:
        self._pending = approval_rules.pending_approval(self.rows)
        self._decisions = check_turn_input(self.rows, self.input)
        if not isinstance(self.input, list):
            return
        for item in self.input:
            if item.otid:
                existing = await self.store.find_by_otid(item.otid)
                if existing is not None:
                    await self._plan_resend(existing)
                    return

    async def _plan_resend(self, existing: MessageSnapshot) -> None:
        """A message already stored under this otid: retry its failed turn, or replay its answer."""
        after = await self.store.rows_after(existing.seq)
        if not after:
            self._retry_user_row = existing
            return
        replay: list[MessageSnapshot] = []
        for row in after:
            if row.role == "user":
                break
            replay.append(row)
        self._replay_rows = replay

    # --- events ------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _message(self, row: MessageSnapshot, *, streamed: bool = False) -> MessageEvent:
        return MessageEvent(run_id=self.run_id, seq=self._next_seq(), message=row, streamed=streamed)

    async def events(self) -> AsyncIterator[EngineEvent]:
        stop_reason, error = "end_turn", None
        try:
            await self.store.start_run()
            async for event in self._run():
                yield event
        except _Finish as finish:
            stop_reason, error = finish.stop_reason, finish.error
        except Exception as exc:
            logger.exception("Run %s failed", self.run_id)
            stop_reason, error = "error", f"{type(exc).__name__}: {exc}"
        except BaseException:
            # The task was cancelled or the consumer closed the stream: never a clean end.
            stop_reason, error = "cancelled", "The run was interrupted before it finished."
            raise
        else:
            stop_reason = self._stop_reason
        finally:
            try:
                await self.store.finish_run(
                    stop_reason=stop_reason,
                    usage=self._usage_with_estimate(),
                    step_count=self._steps,
                    error={"message": error} if error else None,
                )
            except BaseException:
                await self.store.release_turn_lock()
                raise
        yield RunFinishedEvent(
            run_id=self.run_id, seq=self._next_seq(), stop_reason=stop_reason, usage=self.usage, error=error
        )

    def _usage_with_estimate(self) -> Usage:
        return Usage(
            prompt_tokens=self._usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens,
            reasoning_tokens=self._usage.reasoning_tokens,
            cached_tokens=self._usage.cached_tokens,
            estimated=self._estimated,
        )

    @property
    def usage(self) -> TurnUsage:
        return TurnUsage(
            prompt_tokens=self._usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens,
            total_tokens=self._usage.total_tokens,
            step_count=self._steps,
            estimated=self._estimated,
        )

    async def _run(self) -> AsyncIterator[EngineEvent]:
        self._stop_reason = "end_turn"
        if self._replay_rows:
            for row in self._replay_rows:
                yield self._message(row)
            return
        if isinstance(self.input, ApprovalInput):
            async for event in self._answer_approvals():
                yield event
        elif isinstance(self.input, list) and self._retry_user_row is None:
            drafts = [
                MessageDraft(
                    role="user", content=[{"type": "text", "text": item.text}], otid=item.otid, **self._sender()
                )
                for item in self.input
            ]
            for row in await self._append(drafts):
                yield self._message(row)
        async for event in self._steps_loop():
            yield event

    def _sender(self) -> dict[str, Any]:
        return {"metadata": {"sender": self.collab.sender}} if self.collab.sender else {}

    async def _append(self, drafts: list[MessageDraft]) -> list[MessageSnapshot]:
        rows = await self.store.append(drafts)
        self.rows.extend(rows)
        return rows

    # --- approvals -----------------------------------------------------------------

    async def _answer_approvals(self) -> AsyncIterator[EngineEvent]:
        assert self._pending is not None
        [approval_row] = await self._append(
            [
                MessageDraft(
                    role="approval",
                    approvals=[d.as_json() for d in self._decisions],
                    **self._sender(),
                )
            ]
        )
        yield self._message(approval_row)
        tool_row = await self._run_batch(self._pending.message, {d.tool_call_id: d for d in self._decisions})
        yield self._message(tool_row)
        decision = self._after_batch(tool_row)
        if decision is not None:
            raise _Finish(decision)

    # --- the step loop ---------------------------------------------------------------

    async def _steps_loop(self) -> AsyncIterator[EngineEvent]:
        max_steps = max(1, self.collab.settings.max_steps)
        truncations = 0
        while True:
            if await self._cancel_requested(force=True):
                raise _Finish("cancelled")
            if self._steps >= max_steps:
                raise _Finish("max_steps")
            self._steps += 1
            step_number = self._steps
            step_id = await self.store.start_step(number=step_number, model=self.collab.settings.handle)
            outcome = StepOutput(message_id=uuid.uuid4())
            llm_started = time.monotonic()
            try:
                async for event in self._call_model(outcome, step_id):
                    yield event
            except _Finish as finish:
                await self.store.finish_step(
                    step_id,
                    StepRecord(
                        status="cancelled" if finish.stop_reason == "cancelled" else "failed",
                        usage=outcome.usage,
                        llm_ms=_ms_since(llm_started),
                        stop_reason=finish.stop_reason,
                        error={"message": finish.error} if finish.error else None,
                    ),
                )
                raise
            llm_ms = _ms_since(llm_started)
            self._add_usage(outcome.usage)

            truncated = outcome.finish_reason == "length"
            if truncated:
                truncations += 1
                outcome.tool_calls.clear()
            required = self._uncalled_required() if not outcome.tool_calls and not truncated else []
            notice = TRUNCATION_NOTICE if truncated else _required_notice(required)
            assistant = await self._persist_assistant(outcome, step_id, notice)
            yield self._message(assistant, streamed=self.stream_tokens)

            stop: str | None
            tool_ms = None
            if truncated:
                stop = None if truncations <= MAX_TRUNCATION_CONTINUES else "end_turn"
            elif not assistant.tool_calls:
                stop = None if required else "end_turn"
            elif any(c.get("requires_approval") for c in assistant.tool_calls):
                stop = "requires_approval"
            else:
                tool_started = time.monotonic()
                tool_row = await self._run_batch(assistant, {})
                tool_ms = _ms_since(tool_started)
                yield self._message(tool_row)
                stop = self._after_batch(tool_row)
            if stop is None and self._steps >= max_steps:
                stop = "max_steps"
            await self.store.finish_step(
                step_id,
                StepRecord(
                    status="success", usage=outcome.usage, llm_ms=llm_ms, tool_ms=tool_ms, stop_reason=stop or ""
                ),
            )
            if stop is not None:
                self._stop_reason = stop
                return

    def _add_usage(self, usage: Usage) -> None:
        self._estimated = self._estimated or usage.estimated
        self._usage = Usage(
            prompt_tokens=self._usage.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + usage.completion_tokens,
            reasoning_tokens=self._usage.reasoning_tokens + usage.reasoning_tokens,
            cached_tokens=self._usage.cached_tokens + usage.cached_tokens,
        )

    def _available(self) -> set[str]:
        return set(self.specs)

    def _uncalled_required(self) -> list[str]:
        return self.collab.rules.uncalled_required(calls_this_turn(self.rows), self._available())

    def _after_batch(self, tool_row: MessageSnapshot) -> str | None:
        """Whether to stop after a batch ran: a terminal tool stops the turn, otherwise the model reads the results."""
        for result in tool_row.tool_returns:
            if result.get("status") == "success" and self.collab.rules.is_terminal(result.get("name", "")):
                return "tool_rule"
        return None

    async def _cancel_requested(self, *, force: bool = False) -> bool:
        now = time.monotonic()
        if not force and now - self._last_cancel_check < CANCEL_POLL_SECONDS:
            return False
        self._last_cancel_check = now
        return await self.store.heartbeat()

    async def _call_model(self, out: StepOutput, step_id: Any) -> AsyncIterator[EngineEvent]:
        allowed = self._allowed_tools()
        request = build_request(self.rows, self.collab.tools, self.collab.settings, allowed=allowed)
        try:
            async for event in self.collab.llm.generate(request, stream=self.stream_tokens):
                delta = out.absorb(event, self.specs)
                if delta is not None and self.stream_tokens:
                    yield delta_event(delta, self.run_id, self._next_seq(), out.message_id, step_id)
                if self.stream_tokens and await self._cancel_requested():
                    raise _Finish("cancelled")
        except _Finish:
            raise
        except LLMInvalidResponse as exc:
            raise _Finish("invalid_llm_response", str(exc)) from exc
        except LLMError as exc:
            raise _Finish("llm_api_error" if exc.transport else "invalid_llm_response", str(exc)) from exc
        except Exception as exc:
            logger.warning("Model call failed for run %s: %s", self.run_id, exc, exc_info=True)
            raise _Finish("invalid_llm_response", f"{type(exc).__name__}: {exc}") from exc
        problem = out.problem()
        if problem:
            raise _Finish("invalid_llm_response", problem)
        if out.usage.prompt_tokens == 0 and out.usage.completion_tokens == 0:
            out.usage = Usage(
                prompt_tokens=estimate_tokens(repr(request)),
                completion_tokens=estimate_tokens(out.text + "".join(c["arguments"] for c in out.tool_calls)),
                estimated=True,
            )

    def _allowed_tools(self) -> set[str]:
        called = calls_this_turn(self.rows)
        return {
            name for name in self._available() if self.collab.rules.violation(name, called, self._available()) is None
        }

    async def _persist_assistant(self, out: StepOutput, step_id: Any, notice: str | None) -> MessageSnapshot:
        calls = []
        for call in out.tool_calls:
            spec = self.specs.get(call["name"])
            calls.append({**call, "arguments": clean_arguments(call["arguments"]), "requires_approval": is_gated(spec)})
        [row] = await self._append(
            [
                MessageDraft(
                    id=out.message_id,
                    role="assistant",
                    content=out.content_parts(),
                    tool_calls=calls,
                    step_id=step_id,
                    metadata={"notice": notice} if notice else {},
                )
            ]
        )
        return row

    # --- running a batch of tool calls ---------------------------------------------------

    async def _run_batch(
        self, assistant: MessageSnapshot, decisions: dict[str, approval_rules.Decision]
    ) -> MessageSnapshot:
        """Answer every call of ``assistant``: client results, then denials, then executed calls.

        Results are persisted as each completes (on one tool row), so a cancel or
        crash never loses a computed result and a retry never runs a tool twice.
        """
        calls = assistant.tool_calls
        client = [c for c in calls if decisions.get(c["id"]) and decisions[c["id"]].kind == "tool"]
        denied = [
            c
            for c in calls
            if decisions.get(c["id"]) and decisions[c["id"]].kind == "approval" and not decisions[c["id"]].approve
        ]
        answered = {c["id"] for c in client + denied}
        to_run = [c for c in calls if c["id"] not in answered]

        results: list[dict[str, Any]] = []
        for call in client:
            decision = decisions[call["id"]]
            text = decision.tool_return if isinstance(decision.tool_return, str) else json.dumps(decision.tool_return)
            results.append(_result(call, decision.status, text, text, stdout=None, stderr=None))
        for call in denied:
            text = approval_rules.DENIAL_TEMPLATE.format(reason=decisions[call["id"]].reason)
            results.append(_result(call, "error", text, text, stdout=None, stderr=None))

        tool_row: MessageSnapshot | None = None
        if results:
            tool_row = await self._save_results(tool_row, results)
        called = calls_this_turn(self.rows)
        for index, call in enumerate(to_run):
            if await self._cancel_requested(force=True):
                for rest in to_run[index:]:
                    results.append(_result(rest, "error", CANCELLED_RESULT, CANCELLED_RESULT, stdout=None, stderr=None))
                await self._save_results(tool_row, results)
                raise _Finish("cancelled")
            results.append(await self._execute(call, called))
            called.append(call["name"])
            tool_row = await self._save_results(tool_row, results)
        assert tool_row is not None
        return tool_row

    async def _save_results(self, tool_row: MessageSnapshot | None, results: list[dict[str, Any]]) -> MessageSnapshot:
        if tool_row is None:
            [row] = await self._append([MessageDraft(role="tool", tool_returns=list(results))])
            return row
        row = await self.store.set_tool_returns(tool_row.id, list(results))
        self.rows = [row if r.id == row.id else r for r in self.rows]
        return row

    async def _execute(self, call: dict[str, Any], called: list[str]) -> dict[str, Any]:
        spec = self.specs.get(call["name"])
        if spec is None:
            text = f"Error: tool {call['name']!r} does not exist. Available tools: {sorted(self.specs)}."
            return _result(call, "error", text, text)
        violation = self.collab.rules.violation(spec.name, called, self._available())
        if violation:
            return _result(call, "error", violation, violation)
        outcome = await self.collab.tool_runner.run(spec, call.get("arguments") or "{}", self.collab.tool_context)
        return _result(
            call,
            outcome.status,
            outcome.tool_return,
            outcome.func_response,
            stdout=outcome.stdout,
            stderr=outcome.stderr,
        )


def _result(
    call: dict[str, Any],
    status: str,
    tool_return: str,
    func_response: str,
    *,
    stdout: list[str] | None = None,
    stderr: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "tool_call_id": call["id"],
        "name": call["name"],
        "status": status,
        "tool_return": tool_return,
        "func_response": func_response,
        "stdout": stdout,
        "stderr": stderr,
    }


def _required_notice(required: list[str]) -> str | None:
    if not required:
        return None
    return f"[System notice] Continuing: the user expects these tools to be called before you finish: {required}."


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
