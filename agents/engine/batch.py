"""Answering every tool call of one step: client results, denials, then the calls that run.

Results are persisted as each completes (on one tool row), so a cancel or a crash
never loses a computed result and a retry never runs a tool twice. Every result,
whatever its origin, is built by ``tool_result``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agents.engine import approvals as approval_rules
from agents.engine.state import calls_this_turn, missing_results
from agents.engine.store import MessageDraft
from tools import elicitation
from tools.base import StaleWrite, ToolInputRequired

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from agents.engine.rules import ToolRules
    from agents.engine.store import ConversationStore, MessageSnapshot
    from agents.engine.types import ModelToolCall, StoredToolCall, StoredToolImage, StoredToolReturn, ToolStatus
    from tools.base import ElicitationReply, StagedWrite, ToolContext, ToolRunner, ToolSpec

INTERRUPTED_RESULT = "Error: the tool call was interrupted before it finished; its outcome is unknown."
CANCELLED_RESULT = "Error: the run was cancelled before this tool call ran."
STALE_RESULT = "Error: the data this tool call changes kept changing while it ran; it made no change. Try again."
STALE_WRITE_ATTEMPTS = 3


def tool_result(
    call: ModelToolCall,
    status: ToolStatus,
    text: str,
    func_response: str | None = None,
    *,
    stdout: list[str] | None = None,
    stderr: list[str] | None = None,
) -> StoredToolReturn:
    """A stored tool return for ``call``."""
    return {
        "tool_call_id": call["id"],
        "name": call["name"],
        "status": status,
        "tool_return": text,
        "func_response": text if func_response is None else func_response,
        "stdout": stdout,
        "stderr": stderr,
    }


class BatchCancelled(Exception):
    """The run was asked to stop between two calls; the calls not run got a cancelled result."""


class BatchPaused(Exception):
    """A call asked the person for input (``tools.elicitation``) before any result of its batch was stored: it
    now waits for an answer as an approval; ``assistant`` is its row as updated. The rest of the batch runs
    once the answer came."""

    def __init__(self, assistant: MessageSnapshot) -> None:
        super().__init__("a call waits for a person's answer")
        self.assistant = assistant


ASKED_RESULT = (
    "Error: the MCP server asked the person for input ({message!r}); the call is made again, as {call_id}, "
    "once they answer."
)
TOO_MANY_QUESTIONS = "Error: {error} It asked {rounds} questions in a row, the most one call may ask."


@dataclass
class BatchRunner:
    """Runs the batches of one turn. ``rows`` is the turn's in-context list, kept up to date in place."""

    store: ConversationStore
    tool_runner: ToolRunner
    specs: dict[str, ToolSpec]
    rules: ToolRules
    tool_context: ToolContext
    rows: list[MessageSnapshot]
    cancel_requested: Callable[[], Awaitable[bool]]
    asking: list[StoredToolCall] = field(default_factory=list)
    """Calls that asked the person a question and are asked again on a row of their own (``ask_again``)."""

    async def run(self, assistant: MessageSnapshot, decisions: dict[str, approval_rules.Decision]) -> MessageSnapshot:
        """Answer every call of ``assistant`` and return its tool row; raises ``BatchCancelled``, or
        ``BatchPaused`` when the first call to run asks the person for input and nothing answered it yet.
        A call that asked for input runs again with its answer, a declined one included."""
        calls = assistant.tool_calls
        client = [c for c in calls if c["id"] in decisions and decisions[c["id"]].kind == "tool"]
        denied = [c for c in calls if c["id"] in decisions and decisions[c["id"]].denied and "elicitation" not in c]
        answered = client + denied
        to_run = [c for c in calls if c not in answered]
        results = [self._answer(call, decisions[call["id"]]) for call in answered]
        images: list[StoredToolImage] = []

        tool_row: MessageSnapshot | None = None
        if results:
            tool_row = await self._save(tool_row, results, images)
        called = calls_this_turn(self.rows)
        for index, call in enumerate(to_run):
            if await self.cancel_requested():
                results += [tool_result(rest, "error", CANCELLED_RESULT) for rest in to_run[index:]]
                await self._save(tool_row, results, images)
                raise BatchCancelled()
            decision = decisions.get(call["id"])
            edited = json.dumps(decision.arguments) if decision is not None and decision.edited else None
            replies = _replies(call, decision)
            try:
                tool_row = await self._run_and_save(
                    tool_row, results, images, call, called, arguments=edited, replies=replies
                )
            except ToolInputRequired as asked:
                if tool_row is None and not decisions:
                    raise BatchPaused(await self._ask(assistant, call, asked.request)) from None
                # Results or answers are stored after this batch's row already: it is asked again on a row of its own.
                results.append(self._ask_again(call, asked, replies[-1] if replies else None))
                tool_row = await self._save(tool_row, results, images=images)
            called.append(call["name"])
        assert tool_row is not None, "a batch has at least one call"
        return tool_row

    def terminal_tool_ran(self, tool_row: MessageSnapshot) -> bool:
        return any(
            r.get("status") == "success" and self.rules.is_terminal(r.get("name", "")) for r in tool_row.tool_returns
        )

    def _ask_again(
        self, call: StoredToolCall, asked: ToolInputRequired, reply: ElicitationReply | None
    ) -> StoredToolReturn:
        """The result of a call that asked a question it cannot wait for on its own row; the question is asked
        again by a call of its own (``ask_again``), up to ``MAX_ROUNDS`` questions."""
        request = elicitation.asked_again(call.get("elicitation"), asked.request, reply)
        if request["round"] > elicitation.MAX_ROUNDS:
            return tool_result(call, "error", TOO_MANY_QUESTIONS.format(error=asked.error, rounds=request["round"]))
        again: StoredToolCall = {
            "id": f"{call['id'].split('-ask')[0]}-ask{request['round']}",
            "name": call["name"],
            "arguments": call["arguments"],
            "requires_approval": True,
            "elicitation": request,
        }
        self.asking.append(again)
        return tool_result(call, "error", ASKED_RESULT.format(message=request["message"], call_id=again["id"]))

    async def ask_again(self, step_id: object) -> MessageSnapshot | None:
        """The row that asks again what calls of the last batch asked the person (``_ask_again``), if any: an
        assistant row of its own, after everything stored so far, whose calls wait for the answers."""
        if not self.asking:
            return None
        calls, self.asking = self.asking, []
        [row] = await self.store.append([MessageDraft(role="assistant", tool_calls=calls, step_id=step_id)])
        self.rows.append(row)
        return row

    async def _ask(
        self, assistant: MessageSnapshot, call: StoredToolCall, request: dict[str, object]
    ) -> MessageSnapshot:
        """Make ``call`` wait for a person's answer to ``request``, as an approval request of its own."""
        calls = [
            {**c, "requires_approval": True, "elicitation": request} if c["id"] == call["id"] else c
            for c in assistant.tool_calls
        ]
        row = await self.store.set_tool_calls(assistant.id, calls)  # type: ignore[arg-type]
        self.rows[:] = [row if r.id == row.id else r for r in self.rows]
        return row

    @staticmethod
    def _answer(call: StoredToolCall, decision: approval_rules.Decision) -> StoredToolReturn:
        """The result of a call a human answered without running it: a client's result or a denial."""
        if decision.kind == "tool":
            return tool_result(call, decision.status, approval_rules.tool_return_text(decision.tool_return))
        return tool_result(call, "error", approval_rules.DENIAL_TEMPLATE.format(reason=decision.reason))

    async def _save(
        self,
        tool_row: MessageSnapshot | None,
        results: list[StoredToolReturn],
        images: list[StoredToolImage],
        write: StagedWrite | None = None,
    ) -> MessageSnapshot:
        """Store the batch's results so far on its tool row (created by the first save), with their images."""
        if tool_row is None:
            draft = MessageDraft(role="tool", tool_returns=list(results), images=list(images))
            [row] = await self.store.append([draft], write=write)
            self.rows.append(row)
            return row
        # Images are rewritten only when there are some: a batch without images never touches them.
        row = await self.store.set_tool_returns(
            tool_row.id, list(results), write=write, images=list(images) if images else None
        )
        self.rows[:] = [row if r.id == row.id else r for r in self.rows]
        return row

    async def _run_and_save(
        self,
        tool_row: MessageSnapshot | None,
        results: list[StoredToolReturn],
        images: list[StoredToolImage],
        call: StoredToolCall,
        called: list[str],
        *,
        arguments: str | None,
        replies: tuple[ElicitationReply, ...] = (),
    ) -> MessageSnapshot:
        """Run ``call`` and store its result (appended to ``results``, its images to ``images``) with the tool's
        staged change, if any, in one transaction. A change gone stale meanwhile runs the call again, on the
        data as it is now."""
        for _attempt in range(STALE_WRITE_ATTEMPTS):
            result, write, returned = await self._execute(call, called, arguments=arguments, replies=replies)
            try:
                row = await self._save(tool_row, [*results, result], [*images, *returned], write)
            except StaleWrite:
                continue
            results.append(result)
            images.extend(returned)
            return row
        results.append(tool_result(call, "error", STALE_RESULT))
        return await self._save(tool_row, results, images)

    async def _execute(
        self,
        call: StoredToolCall,
        called: list[str],
        *,
        arguments: str | None,
        replies: tuple[ElicitationReply, ...] = (),
    ) -> tuple[StoredToolReturn, StagedWrite | None, list[StoredToolImage]]:
        """Run ``call`` with its arguments, or with ``arguments`` (JSON text) when a person edited them; a call
        that asked the person for input runs with their answers (``replies``)."""
        spec = self.specs.get(call["name"])
        if spec is None:
            missing = f"Error: tool {call['name']!r} does not exist. Available tools: {sorted(self.specs)}."
            return tool_result(call, "error", missing), None, []
        violation = self.rules.violation(spec.name, called, set(self.specs))
        if violation:
            return tool_result(call, "error", violation), None, []
        context = dataclasses.replace(self.tool_context, elicitation_replies=replies) if replies else self.tool_context
        outcome = await self.tool_runner.run(spec, arguments or call.get("arguments") or "{}", context)
        result = tool_result(
            call,
            outcome.status,
            outcome.tool_return,
            outcome.func_response,
            stdout=outcome.stdout,
            stderr=outcome.stderr,
        )
        images: list[StoredToolImage] = [
            {"tool_call_id": call["id"], "mime_type": image.mime_type, "data": image.data} for image in outcome.images
        ]
        return result, outcome.write, images


def _replies(call: StoredToolCall, decision: approval_rules.Decision | None) -> tuple[ElicitationReply, ...]:
    """The answers a call that asked the person for input runs with: the earlier ones and the person's ``decision``."""
    if decision is None or decision.kind != "approval" or "elicitation" not in call:
        return ()
    return elicitation.replies_for(call["elicitation"], approve=decision.approve, reason=decision.reason)


async def repair_interrupted_batch(store: ConversationStore, rows: list[MessageSnapshot]) -> list[MessageSnapshot]:
    """Give every call of a batch cut off by a crash a synthetic error result, so the context stays valid."""
    broken = missing_results(rows)
    if broken is None:
        return rows
    _, tool_row, missing = broken
    synthetic = [tool_result(call, "error", INTERRUPTED_RESULT) for call in missing]
    if tool_row is not None:
        updated = await store.set_tool_returns(tool_row.id, [*tool_row.tool_returns, *synthetic])
        return [updated if r.id == tool_row.id else r for r in rows]
    [created] = await store.append([MessageDraft(role="tool", tool_returns=synthetic, is_err=True)])
    return [*rows, created]
