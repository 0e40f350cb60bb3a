"""An approval followed by user messages in one turn (LETTA_CONVERSATIONS §2), resent approvals, and
client results given as text parts."""

from __future__ import annotations

import pytest

from agents.engine.approvals import KEEP_ALIVE_TEXT
from agents.engine.events import MessageEvent, RunFinishedEvent
from agents.engine.inputs import ApprovalInput, ApprovalItem, ToolReturnItem, UserInput
from agents.errors import NoPendingApproval
from agents.llm.base import ToolResultsTurn, UserTurn
from tests.fakes import reply

pytestmark = pytest.mark.django_db(transaction=True)


def roles(events) -> list[str]:
    return [e.message.role for e in events if isinstance(e, MessageEvent)]


def denial(reason: str = "User cancelled the approval") -> list[ApprovalItem | ToolReturnItem]:
    return [ApprovalItem(approve=False, tool_call_id="toolu_1", reason=reason)]


async def test_a_denial_then_a_message_applies_the_denial_then_gives_the_model_the_message(harness):
    await harness.ask_for_code()

    events = await harness.turn(
        ApprovalInput(approvals=denial(), follow_ups=(UserInput("hello again", otid="o-2"),)), [reply("Hi!")]
    )

    assert roles(events) == ["approval", "tool", "user", "assistant"]
    assert events[-1].stop_reason == "end_turn"
    assert harness.runner.calls == []
    [request] = harness.llm.requests
    results, user = request.turns[-2], request.turns[-1]
    assert isinstance(results, ToolResultsTurn)
    assert results.results[0].content.startswith("Error: request to call tool denied.")
    assert isinstance(user, UserTurn)
    assert "hello again" in str(user)
    rows = await harness.rows()
    assert [r.role for r in rows][-4:] == ["approval", "tool", "user", "assistant"]
    assert rows[-2].otid == "o-2"


async def test_an_approval_then_two_messages_runs_the_tool_and_keeps_both_messages(harness):
    await harness.ask_for_code()

    events = await harness.turn(
        ApprovalInput(
            approvals=[ApprovalItem(approve=True, tool_call_id="toolu_1")],
            follow_ups=(UserInput("first"), UserInput("second")),
        ),
        [reply("Done.")],
    )

    assert roles(events) == ["approval", "tool", "user", "user", "assistant"]
    assert len(harness.runner.calls) == 1
    assert len(harness.llm.requests) == 1


async def test_a_resent_approval_already_applied_continues_with_its_messages(harness):
    await harness.ask_for_code()
    await harness.turn(ApprovalInput(approvals=denial()), [reply("Understood.")])

    events = await harness.turn(
        ApprovalInput(approvals=denial(), follow_ups=(UserInput("and now?"),)), [reply("Now this.")]
    )

    assert roles(events) == ["user", "assistant"]
    assert isinstance(events[-1], RunFinishedEvent)
    assert events[-1].stop_reason == "end_turn"
    rows = await harness.rows()
    assert [r.role for r in rows].count("approval") == 1


async def test_a_resent_approval_alone_runs_a_turn_on_lettas_keep_alive_text(harness):
    await harness.ask_for_code()
    await harness.turn(ApprovalInput(approvals=denial()), [reply("Understood.")])

    events = await harness.turn(ApprovalInput(approvals=denial()), [reply("Still here.")])

    assert roles(events) == ["user", "assistant"]
    user = next(e.message for e in events if isinstance(e, MessageEvent) and e.message.role == "user")
    assert user.content == [{"type": "text", "text": KEEP_ALIVE_TEXT}]


async def test_an_approval_naming_other_calls_with_nothing_pending_is_still_refused(harness):
    await harness.ask_for_code()
    await harness.turn(ApprovalInput(approvals=denial()), [reply("Understood.")])

    with pytest.raises(NoPendingApproval):
        await harness.start(
            ApprovalInput(approvals=[ApprovalItem(approve=False, tool_call_id="toolu_other")]), [reply("x")]
        )


async def test_a_client_result_given_as_text_parts_reaches_the_model_as_its_text(harness):
    await harness.ask_for_code()

    await harness.turn(
        ApprovalInput(
            approvals=[
                ToolReturnItem(
                    type="tool",
                    tool_call_id="toolu_1",
                    tool_return=[{"type": "text", "text": "line one"}, {"type": "text", "text": "line two"}],
                )
            ]
        ),
        [reply("Got it.")],
    )

    assert harness.llm.requests[0].turns[-1].results[0].content == "line one\nline two"
    tool_row = [r for r in await harness.rows() if r.role == "tool"][-1]
    assert tool_row.tool_returns[0]["tool_return"] == "line one\nline two"
