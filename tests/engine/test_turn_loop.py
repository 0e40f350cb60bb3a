from __future__ import annotations

import pytest

from agents.engine.events import MessageEvent, RunFinishedEvent, TextDeltaEvent, ToolCallDeltaEvent
from agents.engine.inputs import ApprovalInput, ApprovalItem, ContinueInput, ToolReturnItem, UserInput
from agents.errors import AgentBusy, InvalidToolCallIds, NoPendingApproval, PendingApprovalConflict
from agents.llm.base import LLMConnectionError, LLMInvalidResponse
from agents.models import Run, Step
from tests.engine.conftest import spec
from tests.fakes import reply

pytestmark = pytest.mark.django_db(transaction=True)


def finished(events) -> RunFinishedEvent:
    assert isinstance(events[-1], RunFinishedEvent)
    return events[-1]


def roles(events) -> list[str]:
    return [e.message.role for e in events if isinstance(e, MessageEvent)]


async def test_a_text_turn_persists_input_and_answer_and_completes_the_run(harness):
    events = await harness.turn([UserInput("hello", otid="o-1")], [reply("Hi there!", reasoning="greet")])

    assert roles(events) == ["user", "assistant"]
    assert finished(events).stop_reason == "end_turn"
    assert finished(events).usage.total_tokens == 15
    rows = await harness.rows()
    assert [r.role for r in rows] == ["system", "user", "user", "assistant"]
    assert rows[2].otid == "o-1"
    assert rows[3].content == [
        {"type": "reasoning", "text": "greet", "signature": "sig"},
        {"type": "text", "text": "Hi there!"},
    ]
    run = await Run.objects.aget(pk=harness.runs[0].pk)
    assert (run.status, run.stop_reason, run.step_count, run.total_tokens) == ("completed", "end_turn", 1, 15)
    step = await Step.objects.aget(run=run)
    assert (step.status, step.prompt_tokens, step.completion_tokens) == ("success", 10, 5)
    assert step.llm_ms is not None


async def test_every_event_carries_the_run_id_and_an_increasing_seq(harness):
    events = await harness.turn([UserInput("hi")], [reply("Hello")], stream_tokens=True)

    assert {e.run_id for e in events} == {harness.runs[0].id}
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_streaming_deltas_share_the_id_of_the_row_persisted_after_them(harness):
    events = await harness.turn([UserInput("hi")], [reply("Hello world")], stream_tokens=True)

    deltas = [e for e in events if isinstance(e, TextDeltaEvent)]
    assert "".join(d.text for d in deltas) == "Hello world"
    assistant = next(e for e in events if isinstance(e, MessageEvent) and e.message.role == "assistant")
    assert {d.message_id for d in deltas} == {assistant.message.id}
    assert assistant.streamed is True
    assert events.index(assistant) > events.index(deltas[-1])


async def test_a_gated_call_stops_the_turn_without_running_the_tool(harness):
    events = await harness.turn(
        [UserInput("get the code")],
        [reply("Let me check.", reasoning="need code", tool_calls=[("get_secret_code", {"input_text": "hello"})])],
    )

    assert finished(events).stop_reason == "requires_approval"
    assert harness.runner.calls == []
    assistant = (await harness.rows())[-1]
    assert assistant.tool_calls[0]["requires_approval"] is True
    assert "request_heartbeat" not in assistant.tool_calls[0]["arguments"]


async def test_a_user_message_while_approval_is_pending_is_a_conflict_naming_the_request(harness):
    await harness.turn([UserInput("code")], [reply("ok", tool_calls=[("get_secret_code", {"input_text": "a"})])])
    pending = (await harness.rows())[-1]

    with pytest.raises(PendingApprovalConflict) as raised:
        await harness.start([UserInput("hi")], [])

    assert raised.value.status_code == 409
    assert raised.value.detail["pending_request_id"] == f"message-{pending.id}"
    assert len(await harness.rows()) == 4


async def test_an_approval_with_nothing_pending_is_rejected(harness):
    with pytest.raises(NoPendingApproval, match="No tool call is currently awaiting approval"):
        await harness.start(ApprovalInput(approvals=[ApprovalItem(approve=True, tool_call_id="x")]), [])


async def test_approval_ids_that_do_not_match_name_expected_and_received(harness):
    await harness.ask_for_code("a")

    with pytest.raises(InvalidToolCallIds) as raised:
        await harness.start(ApprovalInput(approvals=[ApprovalItem(approve=True, tool_call_id="bad")]), [])

    assert raised.value.detail == "Invalid tool call IDs. Expected '['toolu_1']', but received '['bad']'."


async def test_approving_runs_the_tool_and_calls_the_model_again_with_its_result(harness):
    await harness.ask_for_code()

    events = await harness.turn(
        ApprovalInput(
            approvals=[ApprovalItem(approve=True, tool_call_id="toolu_1")],
            approve=False,
            approval_request_id="ignored-legacy-id",
        ),
        [reply("The code is code-5.")],
    )

    assert roles(events) == ["approval", "tool", "assistant"]
    assert harness.runner.calls == [("get_secret_code", {"input_text": "hello"})]
    tool_row = next(e.message for e in events if isinstance(e, MessageEvent) and e.message.role == "tool")
    assert tool_row.tool_returns[0]["status"] == "success"
    assert tool_row.tool_returns[0]["tool_return"] == "code-5"
    sent = harness.llm.requests[0].turns[-1]
    assert sent.role == "tool" and sent.results[0].tool_call_id == "toolu_1"
    assert finished(events).stop_reason == "end_turn"


async def test_denying_returns_an_error_with_the_reason_and_runs_nothing(harness):
    await harness.ask_for_code()

    events = await harness.turn(
        ApprovalInput(approvals=[ApprovalItem(approve=False, tool_call_id="toolu_1", reason="no")]),
        [reply("Understood.")],
    )

    assert harness.runner.calls == []
    result = next(e.message for e in events if isinstance(e, MessageEvent) and e.message.role == "tool").tool_returns[0]
    assert result["status"] == "error"
    assert result["tool_return"] == "Error: request to call tool denied. User reason: no"


async def test_a_client_supplied_result_is_stored_as_given(harness):
    await harness.ask_for_code()

    events = await harness.turn(
        ApprovalInput(
            approvals=[ToolReturnItem(type="tool", tool_call_id="toolu_1", tool_return="740845", status="success")]
        ),
        [reply("The code is 740845.")],
    )

    assert harness.runner.calls == []
    tool_row = next(e.message for e in events if isinstance(e, MessageEvent) and e.message.role == "tool")
    assert tool_row.tool_returns[0]["tool_return"] == "740845"
    assert harness.llm.requests[0].turns[-1].results[0].content == "740845"


async def test_a_parallel_batch_waits_for_every_gated_call_then_resolves_together(harness):
    calls = [
        ("roll_dice", {"num_sides": 16}),
        ("get_secret_code", {"input_text": "hello world"}),
        ("get_secret_code", {"input_text": "hello letta"}),
        ("get_secret_code", {"input_text": "hello test"}),
    ]
    events = await harness.turn(
        [UserInput("all of them")], [reply("On it.", tool_calls=calls, call_ids=["d", "a", "b", "c"])]
    )
    assert finished(events).stop_reason == "requires_approval"
    assert harness.runner.calls == []

    with pytest.raises(InvalidToolCallIds):
        await harness.start(ApprovalInput(approvals=[ApprovalItem(approve=True, tool_call_id="a")]), [])

    events = await harness.turn(
        ApprovalInput(
            approvals=[
                ApprovalItem(approve=True, tool_call_id="a"),
                ApprovalItem(approve=False, tool_call_id="b", reason="not this one"),
                ToolReturnItem(type="tool", tool_call_id="c", tool_return="client", status="success"),
            ]
        ),
        [reply("Done.")],
    )

    tool_row = next(e.message for e in events if isinstance(e, MessageEvent) and e.message.role == "tool")
    assert [r["tool_call_id"] for r in tool_row.tool_returns] == ["c", "b", "d", "a"]
    assert [r["status"] for r in tool_row.tool_returns] == ["success", "error", "success", "success"]
    assert harness.runner.calls == [
        ("roll_dice", {"num_sides": 16}),
        ("get_secret_code", {"input_text": "hello world"}),
    ]


async def test_free_calls_run_and_the_model_reads_their_results(harness):
    events = await harness.turn(
        [UserInput("roll")], [reply("Rolling.", tool_calls=[("roll_dice", {"num_sides": 6})]), reply("You got 6.")]
    )

    assert roles(events) == ["user", "assistant", "tool", "assistant"]
    assert finished(events).stop_reason == "end_turn"
    assert finished(events).usage.step_count == 2
    assert await Step.objects.filter(run=harness.runs[0]).acount() == 2


async def test_a_model_error_after_approval_ends_with_invalid_llm_response_and_the_agent_still_works(harness):
    await harness.ask_for_code()

    events = await harness.turn(
        ApprovalInput(approvals=[ApprovalItem(approve=True, tool_call_id="toolu_1")]),
        [ValueError("TEST: Mocked error")],
        stream_tokens=True,
    )

    assert finished(events).stop_reason == "invalid_llm_response"
    assert [r.role for r in await harness.rows()][-2:] == ["approval", "tool"]
    run = await Run.objects.aget(pk=harness.runs[-1].pk)
    assert (run.status, run.stop_reason) == ("failed", "invalid_llm_response")

    events = await harness.turn([UserInput("Thank you for the secret code.")], [reply("You're welcome.")])
    assert finished(events).stop_reason == "end_turn"


async def test_a_transport_error_ends_with_llm_api_error(harness):
    events = await harness.turn([UserInput("hi")], [LLMConnectionError("connection reset")])

    assert finished(events).stop_reason == "llm_api_error"
    assert [r.role for r in await harness.rows()][-1] == "user"
    step = await Step.objects.aget(run=harness.runs[0])
    assert step.status == "failed"


async def test_resending_a_failed_message_with_its_otid_does_not_duplicate_it(harness):
    await harness.turn([UserInput("ping", otid="same")], [LLMInvalidResponse("boom")])

    events = await harness.turn([UserInput("ping", otid="same")], [reply("pong")])

    assert finished(events).stop_reason == "end_turn"
    rows = await harness.rows()
    assert [r.role for r in rows] == ["system", "user", "user", "assistant"]
    assert harness.llm.requests[0].turns[-1].text == "ping"


async def test_resending_an_answered_message_replays_the_answer_without_calling_the_model(harness):
    await harness.turn([UserInput("ping", otid="same")], [reply("pong")])

    events = await harness.turn([UserInput("ping", otid="same")], [])

    assert roles(events) == ["assistant"]
    assert harness.llm.requests == []
    assert len(await harness.rows()) == 4


async def test_an_otid_reused_after_the_conversation_moved_on_starts_a_new_turn(harness):
    """Seed 000 sends one module-level message (fixed otid) in its first turn and again later."""
    await harness.turn([UserInput("ping", otid="same")], [reply("pong")])
    await harness.turn([UserInput("something else", otid="other")], [reply("ok")])

    events = await harness.turn([UserInput("ping", otid="same")], [reply("pong again")])

    assert roles(events) == ["user", "assistant"]
    assert finished(events).stop_reason == "end_turn"
    assert harness.llm.requests[0].turns[-1].text == "ping"
    rows = await harness.rows()
    assert [r.content[0]["text"] for r in rows if r.role == "user" and r.otid == "same"] == ["ping", "ping"]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (reply(""), "empty completion"),
        (reply("", finish="content_filter"), "content filter"),
        (reply("", complete=False), "without a terminal event"),
        (reply("", finish="length"), "output limit"),
    ],
)
async def test_unusable_completions_are_errors_with_clear_messages(harness, script, message):
    events = await harness.turn([UserInput("hi")], [script])

    assert finished(events).stop_reason == "invalid_llm_response"
    assert message in finished(events).error
    assert [r.role for r in await harness.rows()][-1] == "user"


async def test_content_without_a_finish_reason_counts_as_finished(harness):
    events = await harness.turn([UserInput("hi")], [reply("partial but fine", complete=False)])

    assert finished(events).stop_reason == "end_turn"


async def test_a_length_cut_keeps_the_partial_answer_drops_its_calls_and_continues(harness):
    events = await harness.turn(
        [UserInput("write")],
        [reply("first half", finish="length", tool_calls=[("roll_dice", {"num_sides": 6})]), reply(" second half")],
    )

    assert finished(events).stop_reason == "end_turn"
    assert harness.runner.calls == []
    rows = await harness.rows()
    assert rows[-2].content == [{"type": "text", "text": "first half"}]
    assert rows[-2].tool_calls == []
    assert "cut off" in rows[-2].metadata["notice"]
    assert harness.llm.requests[1].turns[-1].role == "user"
    assert "cut off" in harness.llm.requests[1].turns[-1].text


async def test_length_continuations_are_bounded(harness):
    events = await harness.turn([UserInput("write")], [reply("more", finish="length")] * 3)

    assert finished(events).stop_reason == "end_turn"
    assert len(harness.llm.requests) == 3


async def test_max_steps_stops_the_run_and_continue_resumes_it(harness):
    events = await harness.turn(
        [UserInput("roll forever")], [reply("r", tool_calls=[("roll_dice", {"num_sides": 6})])], max_steps=1
    )
    assert finished(events).stop_reason == "max_steps"

    events = await harness.turn(ContinueInput(), [reply("Done rolling.")])
    assert finished(events).stop_reason == "end_turn"


async def test_a_second_concurrent_turn_gets_a_conflict(harness):
    first = await harness.start([UserInput("one")], [reply("1")])
    with pytest.raises(AgentBusy):
        await harness.start([UserInput("two")], [reply("2")])
    _ = [e async for e in first.events()]

    events = await harness.turn([UserInput("three")], [reply("3")])
    assert finished(events).stop_reason == "end_turn"


async def test_an_expired_lock_of_a_crashed_worker_can_be_taken(harness, settings):
    settings.AGENT_TURN_LOCK_SECONDS = 0
    await harness.start([UserInput("one")], [reply("1")])  # never iterated: the "worker" died

    events = await harness.turn([UserInput("two")], [reply("2")])
    assert finished(events).stop_reason == "end_turn"


async def test_a_cancel_between_steps_keeps_computed_results_and_stops(harness):
    async def cancel_then_roll(num_sides: int) -> str:
        await Run.objects.filter(pk=harness.runs[-1].pk).aupdate(cancel_requested_at="2026-01-01T00:00:00Z")
        return str(num_sides)

    harness.runner.functions["roll_dice"] = cancel_then_roll
    events = await harness.turn(
        [UserInput("roll twice")],
        [reply("r", tool_calls=[("roll_dice", {"num_sides": 6}), ("roll_dice", {"num_sides": 8})]), reply("never")],
    )

    assert finished(events).stop_reason == "cancelled"
    tool_row = (await harness.rows())[-1]
    assert [r["status"] for r in tool_row.tool_returns] == ["success", "error"]
    assert "cancelled" in tool_row.tool_returns[1]["tool_return"]
    assert len(harness.runner.calls) == 1
    run = await Run.objects.aget(pk=harness.runs[-1].pk)
    assert run.status == "cancelled"


async def test_a_batch_cut_off_by_a_crash_gets_synthetic_results_and_is_never_rerun(harness):
    await harness.turn([UserInput("roll")], [reply("r", tool_calls=[("roll_dice", {"num_sides": 6})])], max_steps=1)
    rows = await harness.rows()
    await rows[-1].adelete()  # the worker died before the result was written

    events = await harness.turn([UserInput("again?")], [reply("The roll was interrupted.")])

    assert finished(events).stop_reason == "end_turn"
    assert harness.runner.calls == [("roll_dice", {"num_sides": 6})]
    tool_row = [r for r in await harness.rows() if r.role == "tool"][-1]
    assert tool_row.tool_returns[0]["status"] == "error"
    assert "interrupted" in tool_row.tool_returns[0]["tool_return"]


async def test_streamed_tool_call_deltas_say_whether_they_await_approval(harness):
    events = await harness.turn(
        [UserInput("both")],
        [reply("x", tool_calls=[("roll_dice", {"num_sides": 6}), ("get_secret_code", {"input_text": "a"})])],
        stream_tokens=True,
    )

    deltas = [e for e in events if isinstance(e, ToolCallDeltaEvent)]
    assert {d.name: d.requires_approval for d in deltas} == {"roll_dice": False, "get_secret_code": True}


async def test_tool_rules_are_checked_again_when_an_approved_call_runs(harness):
    harness.rules = [{"type": "run_first", "tool_name": "roll_dice"}]
    await harness.ask_for_code("a")
    assert [t.name for t in harness.llm.requests[0].tools] == ["roll_dice"]

    events = await harness.turn(
        ApprovalInput(approvals=[ApprovalItem(approve=True, tool_call_id="toolu_1")]),
        [reply("I must roll first.")],
    )

    assert harness.runner.calls == []
    result = next(e.message for e in events if isinstance(e, MessageEvent) and e.message.role == "tool").tool_returns[0]
    assert result["status"] == "error"
    assert "Tool rule violation" in result["tool_return"]


async def test_a_terminal_tool_ends_the_turn_with_tool_rule(harness):
    harness.rules = [{"type": "exit_loop", "tool_name": "roll_dice"}]

    events = await harness.turn([UserInput("roll")], [reply("r", tool_calls=[("roll_dice", {"num_sides": 6})])])

    assert finished(events).stop_reason == "tool_rule"
    assert len(harness.llm.requests) == 1


async def test_a_child_rule_limits_the_next_tool_and_a_violation_is_an_error_result(harness):
    harness.rules = [{"type": "constrain_child_tools", "tool_name": "roll_dice", "children": ["roll_dice"]}]
    harness.tools = [*harness.tools, spec("other")]
    harness.runner.functions["other"] = lambda: "other ran"

    events = await harness.turn(
        [UserInput("roll then other")],
        [
            reply("r", tool_calls=[("roll_dice", {"num_sides": 6})]),
            reply("o", tool_calls=[("other", {})]),
            reply("Stopped."),
        ],
    )

    assert {t.name for t in harness.llm.requests[1].tools} == {"roll_dice"}
    tool_rows = [e.message for e in events if isinstance(e, MessageEvent) and e.message.role == "tool"]
    assert "Tool rule violation" in tool_rows[1].tool_returns[0]["tool_return"]
    assert ("other", {}) not in harness.runner.calls


async def test_required_tools_keep_the_turn_going_until_they_are_called(harness):
    harness.rules = [{"type": "required_before_exit", "tool_name": "roll_dice"}]

    events = await harness.turn(
        [UserInput("bye")],
        [reply("Bye!"), reply("r", tool_calls=[("roll_dice", {"num_sides": 6})]), reply("Now bye.")],
    )

    assert finished(events).stop_reason == "end_turn"
    assert "roll_dice" in harness.llm.requests[1].turns[-1].text
    assert harness.runner.calls == [("roll_dice", {"num_sides": 6})]
