"""The projection from rows to Letta's wire JSON, compared with what a real Letta server sent."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from agents.engine.events import ReasoningDeltaEvent, TextDeltaEvent, ToolCallDeltaEvent
from agents.engine.store import MessageSnapshot
from agents.memory.selectors import agent_blocks
from agents.models import Agent, Run, RunStatus, Step, StepStatus
from agents.selectors import agent_tool_rows
from agents.wire.messages import letta_messages_for_row, part_otid
from agents.wire.resources import AgentState, agent_state, run_json, step_json
from agents.wire.stream import StreamEncoder, output_row
from agents.wire.tools import tool_json
from tests.conftest import Cast
from tests.factories import AgentFactory, AgentToolFactory, MessageFactory, RunFactory, ToolFactory
from tests.wire.conftest import captured_messages, captured_response

ROW_ID = uuid.UUID("fb01f0fd-973e-4e21-849e-e75de8b19cab")
RUN_ID = uuid.uuid4()
STEP_ID = uuid.uuid4()
WHEN = datetime(2026, 11, 30, 3, 16, 40, 123456, tzinfo=UTC)


def snapshot(role: str, **fields: Any) -> MessageSnapshot:
    return MessageSnapshot(
        id=fields.pop("id", ROW_ID),
        agent_id=uuid.uuid4(),
        seq=3,
        role=role,  # type: ignore[arg-type]
        run_id=fields.pop("run_id", RUN_ID),
        step_id=fields.pop("step_id", STEP_ID),
        created_at=WHEN,
        **fields,
    )


def state_of(agent: Agent) -> AgentState:
    return agent_state(agent, blocks=agent_blocks(agent), agent_tools=agent_tool_rows(agent), message_ids=[])


def call(call_id: str, name: str, *, gated: bool) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": '{\n  "x": 1\n}', "requires_approval": gated}


def test_it_derives_part_otids_like_letta() -> None:
    assert part_otid("message-fb01f0fd-973e-4e21-849e-e75de8b19cab", 0) == "fb01f0fd-973e-4e21-849e-e75de8b19c80"
    assert part_otid(ROW_ID, 1) == "fb01f0fd-973e-4e21-849e-e75de8b19c81"
    assert part_otid("message-5c6d1ba4-a702-40af-80e2-30c3270d9d31", 1) == "5c6d1ba4-a702-40af-80e2-30c3270d9d01"


def test_it_projects_an_assistant_row_in_wire_order_with_the_captured_keys(letta_capture: list[dict]) -> None:
    row = snapshot(
        "assistant",
        content=[
            {"type": "reasoning", "text": "I will call it.", "signature": "sig-1"},
            {"type": "text", "text": "Calling."},
        ],
        tool_calls=[
            call("toolu_dice", "roll_dice_tool", gated=False),
            call("toolu_a", "get_secret_code_tool", gated=True),
            call("toolu_b", "get_secret_code_tool", gated=True),
        ],
    )

    messages = letta_messages_for_row(row)

    assert [m["message_type"] for m in messages] == [
        "reasoning_message",
        "assistant_message",
        "tool_call_message",
        "approval_request_message",
    ]
    assert {m["id"] for m in messages} == {f"message-{ROW_ID}"}
    assert [m["otid"] for m in messages] == [part_otid(ROW_ID, i) for i in range(4)]
    for message in messages:
        [captured] = captured_messages(letta_capture, message["message_type"])[:1]
        assert list(message) == list(captured), message["message_type"]
    reasoning, assistant, free, gated = messages
    assert reasoning["reasoning"] == "I will call it."
    assert reasoning["signature"] == "sig-1"
    assert reasoning["source"] == "reasoner_model"
    assert assistant["content"] == "Calling."
    assert free["tool_call"] == {"name": "roll_dice_tool", "arguments": '{\n  "x": 1\n}', "tool_call_id": "toolu_dice"}
    assert free["tool_calls"] == [free["tool_call"]]
    assert gated["tool_call"]["tool_call_id"] == "toolu_a"
    assert [c["tool_call_id"] for c in gated["tool_calls"]] == ["toolu_a", "toolu_b"]
    assert reasoning["date"] == "2026-11-30T03:16:40+00:00"
    assert reasoning["step_id"] == f"step-{STEP_ID}"
    assert reasoning["run_id"] == f"run-{RUN_ID}"
    assert reasoning["is_err"] is None


def test_it_shows_redacted_reasoning_as_a_hidden_reasoning_message() -> None:
    row = snapshot(
        "assistant", content=[{"type": "redacted_reasoning", "data": "opaque"}, {"type": "text", "text": "Hi"}]
    )

    hidden, assistant = letta_messages_for_row(row)

    assert hidden["message_type"] == "hidden_reasoning_message"
    assert hidden["state"] == "redacted"
    assert hidden["hidden_reasoning"] == "opaque"
    assert assistant["otid"] == part_otid(ROW_ID, 1)


def test_it_projects_a_tool_row_as_one_tool_return_message_with_every_return(letta_capture: list[dict]) -> None:
    returns = [
        {"tool_call_id": "toolu_c", "name": "get_secret_code_tool", "status": "success", "tool_return": "74",
         "func_response": "74", "stdout": None, "stderr": None},
        {"tool_call_id": "toolu_b", "name": "get_secret_code_tool", "status": "error",
         "tool_return": "Error: request to call tool denied. User reason: None", "func_response": "…",
         "stdout": None, "stderr": None},
        {"tool_call_id": "toolu_a", "name": "get_secret_code_tool", "status": "success", "tool_return": "7421",
         "func_response": '{"status": "OK"}', "stdout": [], "stderr": []},
    ]  # fmt: skip

    [message] = letta_messages_for_row(snapshot("tool", tool_returns=returns))

    [captured, *_] = captured_messages(letta_capture, "tool_return_message")
    assert list(message) == list(captured)
    assert list(message["tool_returns"][0]) == list(captured["tool_returns"][0])
    assert message["otid"] == part_otid(ROW_ID, 0)
    assert (message["tool_call_id"], message["status"], message["tool_return"]) == ("toolu_c", "success", "74")
    assert message["stdout"] is None
    assert [r["tool_call_id"] for r in message["tool_returns"]] == ["toolu_c", "toolu_b", "toolu_a"]
    assert message["tool_returns"][2]["stdout"] == []
    assert "func_response" not in message["tool_returns"][0]


def test_it_derives_the_legacy_approval_fields_from_the_first_approval(letta_capture: list[dict]) -> None:
    approvals = [
        {"type": "approval", "tool_call_id": "toolu_a", "approve": False, "reason": "no"},
        {"type": "tool", "tool_call_id": "toolu_b", "tool_return": "42", "status": "success",
         "stdout": None, "stderr": None},
    ]  # fmt: skip

    [message] = letta_messages_for_row(snapshot("approval", approvals=approvals, step_id=None))

    [captured, *_] = captured_messages(letta_capture, "approval_response_message")
    assert list(message) == list(captured)
    assert (message["approve"], message["approval_request_id"], message["reason"]) == (False, "toolu_a", "no")
    assert message["approvals"][1] == {
        "type": "tool",
        "tool_return": "42",
        "status": "success",
        "tool_call_id": "toolu_b",
        "stdout": None,
        "stderr": None,
    }
    assert message["otid"] is None
    assert message["step_id"] is None


def test_it_leaves_the_legacy_approval_fields_empty_when_the_client_ran_the_tool() -> None:
    approvals = [{"type": "tool", "tool_call_id": "toolu_a", "tool_return": "42", "status": "success"}]

    [message] = letta_messages_for_row(snapshot("approval", approvals=approvals))

    assert (message["approve"], message["approval_request_id"], message["reason"]) == (None, None, None)


def test_it_echoes_the_client_otid_on_a_user_message(letta_capture: list[dict]) -> None:
    row = snapshot("user", content=[{"type": "text", "text": "hello"}], otid="994971e8", step_id=None)

    [message] = letta_messages_for_row(row)

    [captured, *_] = captured_messages(letta_capture, "user_message")
    assert list(message) == list(captured)
    assert message["content"] == "hello"
    assert message["otid"] == "994971e8"


def test_it_projects_a_system_row_as_a_system_message() -> None:
    [message] = letta_messages_for_row(snapshot("system", content=[{"type": "text", "text": "Be brief."}]))

    assert message["message_type"] == "system_message"
    assert message["content"] == "Be brief."


def test_it_marks_error_rows_with_is_err_true() -> None:
    [message] = letta_messages_for_row(snapshot("user", content=[{"type": "text", "text": "x"}], is_err=True))

    assert message["is_err"] is True


@pytest.mark.django_db
def test_it_projects_a_saved_message_row(cast: Cast) -> None:
    row = MessageFactory(agent=AgentFactory(organization=cast.org_a), content=[{"type": "text", "text": "hi"}])

    [message] = letta_messages_for_row(row)

    assert message["id"] == row.public_id
    assert message["run_id"] is None
    assert message["date"] == row.created_at.astimezone(UTC).isoformat(timespec="seconds")


@pytest.mark.django_db
def test_it_renders_a_tool_with_the_captured_keys(cast: Cast, letta_capture: list[dict]) -> None:
    tool = ToolFactory(organization=cast.org_a, default_requires_approval=True)

    rendered = tool_json(tool)

    captured = captured_response(letta_capture, "PUT", "/v1/tools/")
    assert list(rendered) == list(captured)
    assert rendered["id"] == tool.public_id
    assert rendered["return_char_limit"] == 50000
    assert rendered["enable_parallel_execution"] is False
    assert rendered["metadata_"] == {}
    assert rendered["default_requires_approval"] is True


@pytest.mark.django_db
def test_it_renders_an_agent_state_with_the_captured_keys_and_llm_config(
    cast: Cast, letta_capture: list[dict], settings: Any
) -> None:
    settings.ANTHROPIC_BASE_URL = ""
    settings.OPENAI_BASE_URL = ""
    agent = AgentFactory(
        organization=cast.org_a,
        model="anthropic/claude-sonnet-4-5-20250929",
        embedding="openai/text-embedding-3-small",
        enable_reasoner=True,
        max_reasoning_tokens=1024,
        tags=["approval_test"],
        memory_blocks=[],  # as the captured agent was created
        context_window=32000,  # the captured Letta 0.13 agent's window (0.16 would default to 128000)
    )
    gated = AgentToolFactory(agent=agent, tool__default_requires_approval=True, tool__name="get_secret_code_tool")
    AgentToolFactory(agent=agent, tool__name="roll_dice_tool")

    state = state_of(agent)

    captured = captured_response(letta_capture, "POST", "/v1/agents/")
    assert list(state)[: len(captured)] == list(captured)
    extra = ["model", "model_settings", "compaction_settings", "embedding", "pending_approval"]
    assert list(state)[len(captured) :] == extra
    assert state["model"] == "anthropic/claude-sonnet-4-5-20250929"
    assert state["model_settings"]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert list(state["llm_config"]) == list(captured["llm_config"])
    assert list(state["embedding_config"]) == list(captured["embedding_config"])
    assert state["embedding_config"] == captured["embedding_config"]
    assert state["llm_config"] == captured["llm_config"]
    assert state["tool_rules"] == [{"tool_name": gated.tool.name, "type": "requires_approval", "prompt_template": None}]
    assert [t["name"] for t in state["tools"]] == ["get_secret_code_tool", "roll_dice_tool"]
    assert state["memory"] == captured["memory"]
    assert state["created_at"].endswith("Z")


@pytest.mark.django_db
def test_it_keeps_stored_tool_rules_and_drops_the_approval_rule_of_an_overridden_tool(cast: Cast) -> None:
    agent = AgentFactory(organization=cast.org_a, tool_rules=[{"tool_name": "t", "type": "exit_loop"}])
    AgentToolFactory(agent=agent, tool__default_requires_approval=True, requires_approval=False)

    stored = [{"tool_name": "t", "type": "exit_loop", "prompt_template": None}]  # as agent_create stores it
    assert state_of(agent)["tool_rules"] == stored


@pytest.mark.django_db
def test_it_renders_runs_and_steps_in_letta_shape(cast: Cast) -> None:
    run: Run = RunFactory(agent=AgentFactory(organization=cast.org_a), status=RunStatus.QUEUED)
    step = Step.objects.create(
        organization=cast.org_a,
        agent=run.agent,
        run=run,
        number=1,
        model="anthropic/claude-sonnet-4-5-20250929",
        status=StepStatus.SUCCESS,
        prompt_tokens=624,
        completion_tokens=88,
        total_tokens=712,
        stop_reason="requires_approval",
    )

    rendered_run = run_json(run)
    rendered_step = step_json(step)

    assert rendered_run["id"] == run.public_id
    assert rendered_run["status"] == "created"
    assert rendered_run["agent_id"] == run.agent.public_id
    assert rendered_run["stop_reason"] is None
    assert rendered_step["id"] == step.public_id
    assert rendered_step["job_id"] == run.public_id
    assert rendered_step["model"] == "claude-sonnet-4-5-20250929"
    assert rendered_step["provider_name"] == "anthropic"
    assert (rendered_step["prompt_tokens"], rendered_step["total_tokens"]) == (624, 712)
    assert rendered_step["status"] == "success"
    assert rendered_step["stop_reason"] == "requires_approval"


# --- the stream encoder (``agents.wire.stream``) ---------------------------------------------

MESSAGE_ID = f"message-{ROW_ID}"


def reasoning(text: str, offset: int, part: int = 0) -> ReasoningDeltaEvent:
    return ReasoningDeltaEvent(RUN_ID, 1, MESSAGE_ID, STEP_ID, text, part_index=part, offset=offset)


def tool_delta(
    index: int, arguments: str | None, *, gated: bool, call_id: str = "toolu_a", message_id: str = MESSAGE_ID
) -> ToolCallDeltaEvent:
    return ToolCallDeltaEvent(RUN_ID, 1, message_id, STEP_ID, index, call_id, "get_secret_code", arguments, gated)


def committed(encoder: StreamEncoder, row: MessageSnapshot) -> list[dict[str, Any]]:
    output = output_row(row)
    assert output is not None
    return encoder.rows_committed([output], live=True)


def test_the_encoder_streams_tool_call_deltas_in_lettas_form_each_with_its_seq_id() -> None:
    encoder = StreamEncoder()
    chunks = [
        *encoder.delta(reasoning("Let me ", 0)),
        *encoder.delta(reasoning("call it.", 7)),
        *encoder.delta(tool_delta(1, None, gated=True)),
        *encoder.delta(tool_delta(1, '{"input_text"', gated=True)),
        *encoder.delta(tool_delta(1, ': "hi"}', gated=True)),
    ]
    row = snapshot(
        "assistant",
        content=[{"type": "reasoning", "text": "Let me call it.", "signature": None}],
        tool_calls=[{"id": "toolu_a", "name": "get_secret_code", "arguments": '{"input_text": "hi"}',
                     "requires_approval": True}],
    )  # fmt: skip

    assert committed(encoder, row) == []
    calls = [c for c in chunks if c["message_type"] == "approval_request_message"]
    assert [c["tool_call"]["arguments"] for c in calls] == [None, '{"input_text"', ': "hi"}']
    assert {(c["id"], c["otid"]) for c in calls} == {(MESSAGE_ID, part_otid(ROW_ID, 1))}
    assert all(c["tool_calls"] is None for c in calls)
    assert [c["seq_id"] for c in chunks] == [10_000_007, 10_000_015, 20_000_001, 20_000_014, 20_000_021]


def test_resuming_in_the_middle_of_a_call_sends_the_rest_of_it_then_the_later_calls_whole() -> None:
    calls = [
        {"id": "toolu_a", "name": "get_secret_code", "arguments": '{"input_text": "a"}', "requires_approval": True},
        {"id": "toolu_b", "name": "get_secret_code", "arguments": '{"input_text": "b"}', "requires_approval": True},
    ]
    row = snapshot("assistant", tool_calls=calls)

    # The client holds the call's opening and 5 characters of its arguments.
    rest = committed(StreamEncoder(starting_after=10_000_006), row)

    assert [c["tool_call"] for c in rest] == [
        {"name": "get_secret_code", "arguments": 'ut_text": "a"}', "tool_call_id": "toolu_a"},
        {"name": "get_secret_code", "arguments": '{"input_text": "b"}', "tool_call_id": "toolu_b"},
    ]
    assert [c["seq_id"] for c in rest] == [10_000_020, 19_999_999]


def test_a_previewed_call_that_turned_out_free_is_sent_whole_at_its_commit() -> None:
    encoder = StreamEncoder()
    sent = [*encoder.delta(tool_delta(0, None, gated=True)), *encoder.delta(tool_delta(0, "{}", gated=True))]
    call = {"id": "toolu_a", "name": "get_secret_code", "arguments": "{}", "requires_approval": False}

    [whole] = committed(encoder, snapshot("assistant", tool_calls=[call]))

    assert [c["message_type"] for c in sent] == ["approval_request_message"] * 2
    assert whole["message_type"] == "tool_call_message"
    assert whole["tool_calls"] == [{"name": "get_secret_code", "arguments": "{}", "tool_call_id": "toolu_a"}]
    assert whole["seq_id"] == 19_999_999


def test_a_part_that_does_not_stream_holds_back_the_deltas_after_it_so_seq_ids_keep_their_order() -> None:
    encoder = StreamEncoder()
    held = encoder.delta(TextDeltaEvent(RUN_ID, 1, MESSAGE_ID, STEP_ID, "Hi", part_index=1, offset=0))
    row = snapshot(
        "assistant", content=[{"type": "redacted_reasoning", "data": "opaque"}, {"type": "text", "text": "Hi"}]
    )

    chunks = committed(encoder, row)

    assert held == []
    assert [(c["message_type"], c["seq_id"]) for c in chunks] == [
        ("hidden_reasoning_message", 19_999_999),
        ("assistant_message", 29_999_999),
    ]


def test_a_stream_that_joins_midway_sends_calls_only_once_it_has_seen_a_row_begin() -> None:
    encoder = StreamEncoder(continuous=False)
    missed_start = encoder.delta(tool_delta(0, '"a"}', gated=False))
    row = snapshot("assistant", tool_calls=[{"id": "toolu_a", "name": "get_secret_code", "arguments": '{"x": "a"}',
                                             "requires_approval": False}])  # fmt: skip
    [whole] = committed(encoder, row)
    next_row = encoder.delta(tool_delta(0, None, gated=False, call_id="toolu_b", message_id=f"message-{uuid.uuid4()}"))

    assert missed_start == []
    assert whole["tool_calls"][0]["arguments"] == '{"x": "a"}'
    assert whole["seq_id"] == 19_999_999
    assert [c["seq_id"] for c in next_row] == [20_000_001]


def test_a_summary_counts_in_the_numbering_but_shows_only_when_asked() -> None:
    summary = snapshot("user", content=[{"type": "text", "text": "summary"}], metadata={"kind": "summary"})
    answer = snapshot("assistant", id=uuid.uuid4(), content=[{"type": "text", "text": "Hi"}])

    plain = StreamEncoder()
    asked = StreamEncoder(compaction_messages=True)

    assert [c["seq_id"] for c in committed(plain, summary) + committed(plain, answer)] == [39_999_999]
    shown = committed(asked, summary) + committed(asked, answer)
    assert [(c["message_type"], c["seq_id"]) for c in shown] == [
        ("event_message", 19_999_999),
        ("summary_message", 29_999_999),
        ("assistant_message", 39_999_999),
    ]


def test_text_after_previewed_calls_is_held_and_the_commit_sends_the_row_as_stored_in_order() -> None:
    encoder = StreamEncoder()
    previewed = encoder.delta(tool_delta(0, None, gated=False))
    held = encoder.delta(TextDeltaEvent(RUN_ID, 1, MESSAGE_ID, STEP_ID, "Done.", part_index=0, offset=0))
    call = {"id": "toolu_a", "name": "get_secret_code", "arguments": "{}", "requires_approval": False}
    row = snapshot("assistant", content=[{"type": "text", "text": "Done."}], tool_calls=[call])

    chunks = committed(encoder, row)

    assert [c["seq_id"] for c in previewed] == [10_000_001]
    assert held == []
    assert [(c["message_type"], c["seq_id"]) for c in chunks] == [
        ("assistant_message", 19_999_999),
        ("tool_call_message", 29_999_999),
    ]
