"""The model's view of the window's rows: derived once per row, and still right when a row's meaning changes."""

from __future__ import annotations

import uuid
from typing import Any

from agents.engine.context import conversation_turns
from agents.engine.store import MessageSnapshot, Role
from agents.llm.anthropic_payload import EPHEMERAL, build_body
from agents.llm.base import AssistantTurn, LLMRequest, ToolResultsTurn


def row(seq: int, role: Role, text: str = "", **fields: Any) -> MessageSnapshot:
    content = [{"type": "text", "text": text}] if text else []
    return MessageSnapshot(id=uuid.uuid4(), agent_id=None, seq=seq, role=role, content=content, **fields)


CALL = {"id": "toolu_1", "name": "roll_die", "arguments": '{"sides": 6}'}


def test_a_row_is_converted_once_for_every_request_that_holds_it() -> None:
    rows = [row(1, "system", "Be brief."), row(2, "user", "Roll"), row(3, "assistant", "Rolling.", tool_calls=[CALL])]

    _, first = conversation_turns(rows)
    _, second = conversation_turns([*rows, row(4, "user", "Again")])

    assert second[0] is first[0]
    assert second[1] is first[1]


def test_a_call_edited_after_its_row_was_shown_is_shown_as_it_ran() -> None:
    rows = [row(1, "user", "Roll"), row(2, "assistant", tool_calls=[{**CALL, "requires_approval": True}])]
    _, before = conversation_turns(rows)
    decision = {"type": "approval", "tool_call_id": "toolu_1", "approve": True, "arguments": {"sides": 20}}
    answered = [*rows, row(3, "approval", approvals=[decision])]

    _, after = conversation_turns(answered)

    assert isinstance(before[1], AssistantTurn)
    assert isinstance(after[1], AssistantTurn)
    assert before[1].tool_calls[0].arguments == '{"sides": 6}'
    assert after[1].tool_calls[0].arguments == '{"sides": 20}'


def test_a_tool_row_s_images_are_shown_only_to_a_model_that_takes_images() -> None:
    result = {"tool_call_id": "toolu_1", "name": "roll_die", "func_response": "4", "status": "success"}
    image = {"tool_call_id": "toolu_1", "mime_type": "image/png", "data": "iVBORw0KGgo="}
    rows = [
        row(1, "user", "Roll"),
        row(2, "assistant", tool_calls=[CALL]),
        row(3, "tool", tool_returns=[result], images=[image]),
    ]

    _, plain = conversation_turns(rows)
    _, with_images = conversation_turns(rows, images=True)

    assert isinstance(plain[2], ToolResultsTurn)
    assert isinstance(with_images[2], ToolResultsTurn)
    assert plain[2].results[0].images == ()
    assert [part.mime_type for part in with_images[2].results[0].images] == ["image/png"]


def test_turns_shared_by_two_requests_carry_the_cache_breakpoint_on_the_last_message_only() -> None:
    rows = [row(1, "user", "Roll"), row(2, "assistant", "A 4."), row(3, "user", "Again")]
    _, turns = conversation_turns(rows)
    first = build_body(LLMRequest(model="m", system="s", turns=turns), stream=False)
    _, longer = conversation_turns([*rows, row(4, "assistant", "A 2."), row(5, "user", "Once more")])

    second = build_body(LLMRequest(model="m", system="s", turns=longer), stream=False)

    marked = [
        (index, block)
        for index, m in enumerate(second["messages"])
        for block in m["content"]
        if "cache_control" in block
    ]
    assert marked == [(4, {"type": "text", "text": "Once more", "cache_control": EPHEMERAL})]
    assert first["messages"][2]["content"] == [{"type": "text", "text": "Again", "cache_control": EPHEMERAL}]
