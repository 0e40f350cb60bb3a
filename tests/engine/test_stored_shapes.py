"""The rows a turn writes have exactly the shapes ``agents.engine.types`` declares."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from agents.engine.inputs import ApprovalInput, ApprovalItem, ToolReturnItem, UserInput
from agents.engine.types import (
    StoredApprovalDecision,
    StoredClientReturn,
    StoredToolCall,
    StoredToolReturn,
    ToolStatus,
)
from tests.fakes import reply

pytestmark = pytest.mark.django_db(transaction=True)


def keys_of(typed_dict: Any) -> set[str]:
    return set(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


async def test_tool_calls_tool_returns_and_approval_items_are_stored_with_the_typed_keys(harness):
    calls = [
        ("roll_dice", {"num_sides": 6}),
        ("get_secret_code", {"input_text": "a"}),
        ("get_secret_code", {"input_text": "b"}),
    ]
    await harness.turn([UserInput("go")], [reply("On it.", tool_calls=calls, call_ids=["d", "a", "b"])])
    await harness.turn(
        ApprovalInput(
            approvals=[
                ApprovalItem(approve=False, tool_call_id="a", reason="not this one"),
                ToolReturnItem(type="tool", tool_call_id="b", tool_return="from the client"),
            ]
        ),
        [reply("Done.")],
    )
    rows = await harness.rows()

    [assistant] = [row for row in rows if row.role == "assistant" and row.tool_calls]
    # ``elicitation`` (NotRequired) is only on a call that asked the person for input.
    assert [set(call) for call in assistant.tool_calls] == [keys_of(StoredToolCall) - {"elicitation"}] * 3
    assert all(isinstance(call["arguments"], str) for call in assistant.tool_calls)

    [approval] = [row for row in rows if row.role == "approval"]
    assert [set(item) for item in approval.approvals] == [keys_of(StoredApprovalDecision), keys_of(StoredClientReturn)]

    [tool] = [row for row in rows if row.role == "tool"]
    assert [set(result) for result in tool.tool_returns] == [keys_of(StoredToolReturn)] * 3
    assert {result["status"] for result in tool.tool_returns} <= set(get_args(ToolStatus))
