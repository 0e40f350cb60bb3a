"""A turn request survives being stored on its run and read back by the worker."""

from __future__ import annotations

import pytest

from agents.engine.inputs import ApprovalCreate, ApprovalItem, MessageCreate, ToolReturnItem, TurnRequest


@pytest.mark.parametrize(
    "request_",
    [
        TurnRequest(messages=[MessageCreate(content="hi", otid="o-1")]),
        TurnRequest(messages=[ApprovalCreate(approvals=[ApprovalItem(approve=False, tool_call_id="c", reason="no")])]),
        TurnRequest(
            messages=[ApprovalCreate(approvals=[ToolReturnItem(type="tool", tool_call_id="c", tool_return="4")])]
        ),
        TurnRequest(messages=[]),
        TurnRequest(input="hello", max_steps=3),
    ],
)
def test_a_request_built_here_reads_back_the_same_from_what_its_run_stores(request_: TurnRequest) -> None:
    assert TurnRequest.parse(request_.stored()).turn_input() == request_.turn_input()
