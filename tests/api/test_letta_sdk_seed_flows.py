"""Seed 000's approval scenarios, unchanged, through ``letta-client`` against a live server.

The server talks to our fake Anthropic (auto mode: it calls the tools the user
names and quotes their results), exactly as the seed's real model would.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

import pytest
from letta_client import ApprovalCreate, Letta, MessageCreate
from letta_client.core.api_error import ApiError

from tests.api.live_server import start_live_server
from tests.api.test_letta_client_live import get_secret_code_tool, roll_dice_tool
from tests.fake_llm.script import Fault

if TYPE_CHECKING:
    from collections.abc import Iterator

    from letta_client import AgentState

    from tests.api.live_server import LiveServer
    from tests.fake_llm.server import FakeLLMServer

SECRET_CODE = "740845635798344975"
FAKE_REQUEST_ID = str(uuid.uuid4())
USER_MESSAGE_CONTENT = (
    "This is an automated test message. Call the get_secret_code_tool to get the code for text 'hello world'."
)
PARALLEL_CONTENT = (
    "This is an automated test message. Call the get_secret_code_tool 3 times in parallel for the following "
    "inputs: 'hello world', 'hello letta', 'hello test', and also call the roll_dice_tool once with a 16-sided dice."
)
FOLLOW_UP = [MessageCreate(role="user", content="Thank you for the secret code.", otid=str(uuid.uuid4()))]


def approval_request() -> list[MessageCreate]:
    return [MessageCreate(role="user", content=USER_MESSAGE_CONTENT, otid=str(uuid.uuid4()))]


def answer(approvals: list[dict], *, legacy_approve: bool = False, reason: str | None = None) -> list[ApprovalCreate]:
    """The seed's ApprovalCreate: deliberately wrong legacy fields that the approvals list must override."""
    return [
        ApprovalCreate(approve=legacy_approve, approval_request_id=FAKE_REQUEST_ID, reason=reason, approvals=approvals)
    ]


def accumulate_chunks(stream) -> list:
    messages, previous = [], None
    for chunk in stream:
        if chunk.message_type != previous:
            messages.append(chunk)
        previous = chunk.message_type
    return messages


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    env = {"ANTHROPIC_BASE_URL": fake_llm_server.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
    with start_live_server(tmp_path_factory.mktemp("seed-flows"), extra_env=env) as live:
        yield live


@pytest.fixture(scope="module")
def client(server: LiveServer) -> Letta:
    return Letta(base_url=server.url, token=server.api_key)


@pytest.fixture
def agent(client: Letta, fake_llm: FakeLLMServer) -> Iterator[AgentState]:
    client.tools.upsert_base_tools()
    approval_tool = client.tools.upsert_from_function(func=get_secret_code_tool, default_requires_approval=True)
    dice_tool = client.tools.upsert_from_function(func=roll_dice_tool)
    state = client.agents.create(
        name="approval_test_agent",
        agent_type="letta_v1_agent",
        include_base_tools=False,
        tool_ids=[approval_tool.id, dice_tool.id],
        include_base_tool_rules=False,
        tool_rules=[],
        model="anthropic/claude-sonnet-4-5-20250929",
        embedding="openai/text-embedding-3-small",
        tags=["approval_test"],
    )
    state = client.agents.modify(
        agent_id=state.id, llm_config=dict(state.llm_config.model_dump(), parallel_tool_calls=True)
    )
    yield state
    client.agents.delete(agent_id=state.id)
    client.tools.delete(tool_id=approval_tool.id)
    client.tools.delete(tool_id=dice_tool.id)


def approve(client: Letta, agent_id: str, tool_call_id: str) -> None:
    client.agents.messages.create(
        agent_id=agent_id, messages=answer([{"type": "approval", "approve": True, "tool_call_id": tool_call_id}])
    )


def test_an_approval_with_nothing_pending_is_a_400(client, agent):
    with pytest.raises(ApiError, match="No tool call is currently awaiting approval") as raised:
        client.agents.messages.create(
            agent_id=agent.id,
            messages=answer(
                [{"type": "approval", "approve": True, "tool_call_id": FAKE_REQUEST_ID}], legacy_approve=True
            ),
        )
    assert raised.value.status_code == 400


def test_a_user_message_while_approval_is_pending_is_a_409(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())

    with pytest.raises(ApiError, match="Please approve or deny the pending request before continuing") as raised:
        client.agents.messages.create(agent_id=agent.id, messages=[MessageCreate(role="user", content="hi")])

    assert raised.value.status_code == 409
    assert raised.value.body["detail"]["pending_request_id"] == response.messages[2].id
    approve(client, agent.id, response.messages[2].tool_call.tool_call_id)


def test_wrong_tool_call_ids_are_a_400(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())

    with pytest.raises(ApiError, match="Invalid tool call IDs") as raised:
        client.agents.messages.create(
            agent_id=agent.id,
            messages=answer(
                [{"type": "approval", "approve": True, "tool_call_id": FAKE_REQUEST_ID}], legacy_approve=True
            ),
        )

    assert raised.value.status_code == 400
    approve(client, agent.id, response.messages[2].tool_call.tool_call_id)


def test_invoke_approval_request(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())

    messages = response.messages
    assert [m.message_type for m in messages] == ["reasoning_message", "assistant_message", "approval_request_message"]
    assert messages[2].tool_call.name == "get_secret_code_tool"
    assert len(messages[2].tool_calls) == 1
    assert messages[2].tool_calls[0]["name"] == "get_secret_code_tool"
    assert "request_heartbeat" not in json.loads(messages[2].tool_call.arguments)
    assert response.stop_reason.stop_reason == "requires_approval"
    client.agents.context.retrieve(agent_id=agent.id)
    approve(client, agent.id, messages[2].tool_call.tool_call_id)


def test_invoke_approval_request_stream(client, agent):
    stream = client.agents.messages.create_stream(agent_id=agent.id, messages=approval_request(), stream_tokens=True)

    messages = accumulate_chunks(stream)

    assert [m.message_type for m in messages] == [
        "reasoning_message",
        "assistant_message",
        "approval_request_message",
        "stop_reason",
        "usage_statistics",
    ]
    assert messages[2].tool_call.name == "get_secret_code_tool"
    client.agents.context.retrieve(agent_id=agent.id)
    approve(client, agent.id, messages[2].tool_call.tool_call_id)


def test_a_tool_runs_without_approval_after_turning_approval_off(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    tool_call_id = response.messages[2].tool_call.tool_call_id
    accumulate_chunks(
        client.agents.messages.create_stream(
            agent_id=agent.id,
            messages=answer([{"type": "approval", "approve": True, "tool_call_id": tool_call_id}]),
            stream_tokens=True,
        )
    )
    client.agents.tools.modify_approval(agent_id=agent.id, tool_name="get_secret_code_tool", requires_approval=False)

    messages = accumulate_chunks(
        client.agents.messages.create_stream(agent_id=agent.id, messages=approval_request(), stream_tokens=True)
    )

    types = [m.message_type for m in messages]
    assert types[0] == "reasoning_message"
    assert "tool_call_message" in types
    assert types[types.index("tool_call_message") + 1] == "tool_return_message"
    assert "approval_request_message" not in types
    assert types[-2:] == ["stop_reason", "usage_statistics"]


def test_approve_tool_call_request(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    tool_call_id = response.messages[2].tool_call.tool_call_id

    messages = accumulate_chunks(
        client.agents.messages.create_stream(
            agent_id=agent.id,
            messages=answer([{"type": "approval", "approve": True, "tool_call_id": tool_call_id}]),
            stream_tokens=True,
        )
    )

    assert [m.message_type for m in messages] == [
        "tool_return_message",
        "reasoning_message",
        "assistant_message",
        "stop_reason",
        "usage_statistics",
    ]
    assert messages[0].tool_call_id == tool_call_id
    assert messages[0].status == "success"


def test_approve_cursor_fetch(client, agent):
    last_message_cursor = client.agents.messages.list(agent_id=agent.id, limit=1)[0].id
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    last_message_id = response.messages[0].id
    tool_call_id = response.messages[2].tool_call.tool_call_id

    messages = client.agents.messages.list(agent_id=agent.id, after=last_message_cursor)
    assert [m.message_type for m in messages] == [
        "user_message",
        "reasoning_message",
        "assistant_message",
        "approval_request_message",
    ]
    assert "request_heartbeat" not in json.loads(messages[3].tool_call.arguments)

    approve(client, agent.id, tool_call_id)

    messages = client.agents.messages.list(agent_id=agent.id, after=last_message_id)
    assert [m.message_type for m in messages] == [
        "approval_response_message",
        "tool_return_message",
        "reasoning_message",
        "assistant_message",
    ]
    assert messages[0].approval_request_id == tool_call_id
    assert messages[0].approve is True
    assert messages[0].approvals[0]["approve"] is True
    assert messages[0].approvals[0]["tool_call_id"] == tool_call_id
    assert messages[1].status == "success"


def test_approve_and_follow_up(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    approve(client, agent.id, response.messages[2].tool_call.tool_call_id)

    messages = accumulate_chunks(
        client.agents.messages.create_stream(agent_id=agent.id, messages=FOLLOW_UP, stream_tokens=True)
    )

    assert [m.message_type for m in messages] == [
        "reasoning_message",
        "assistant_message",
        "stop_reason",
        "usage_statistics",
    ]


@pytest.mark.parametrize(
    "decision",
    [
        {"type": "approval", "approve": True},
        {"type": "approval", "approve": False, "reason": f"You don't need to call the tool, the code is {SECRET_CODE}"},
        {"type": "tool", "tool_return": SECRET_CODE, "status": "success"},
    ],
    ids=["approve", "deny", "client-side"],
)
def test_a_model_error_after_the_answer_is_invalid_llm_response_and_the_agent_is_not_bricked(
    client, agent, fake_llm, decision
):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    tool_call_id = response.messages[2].tool_call.tool_call_id
    fake_llm.script(Fault.malformed_json())

    messages = accumulate_chunks(
        client.agents.messages.create_stream(
            agent_id=agent.id, messages=answer([{**decision, "tool_call_id": tool_call_id}]), stream_tokens=True
        )
    )

    assert next(m for m in messages if m.message_type == "stop_reason").stop_reason == "invalid_llm_response"
    messages = accumulate_chunks(client.agents.messages.create_stream(agent_id=agent.id, messages=FOLLOW_UP))
    assert [m.message_type for m in messages] == [
        "reasoning_message",
        "assistant_message",
        "stop_reason",
        "usage_statistics",
    ]


def test_deny_tool_call_request(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    tool_call_id = response.messages[2].tool_call.tool_call_id
    reason = f"You don't need to call the tool, the secret code is {SECRET_CODE}"

    messages = accumulate_chunks(
        client.agents.messages.create_stream(
            agent_id=agent.id,
            messages=answer(
                [{"type": "approval", "approve": False, "tool_call_id": tool_call_id, "reason": reason}],
                legacy_approve=True,
                reason=reason,
            ),
        )
    )

    assert [m.message_type for m in messages] == [
        "tool_return_message",
        "reasoning_message",
        "assistant_message",
        "stop_reason",
        "usage_statistics",
    ]
    assert messages[0].tool_call_id == tool_call_id
    assert messages[0].status == "error"
    assert SECRET_CODE in messages[2].content


def test_deny_cursor_fetch(client, agent):
    last_message_cursor = client.agents.messages.list(agent_id=agent.id, limit=1)[0].id
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    last_message_id = response.messages[0].id
    tool_call_id = response.messages[2].tool_call.tool_call_id
    assert len(client.agents.messages.list(agent_id=agent.id, after=last_message_cursor)) == 4
    reason = f"You don't need to call the tool, the secret code is {SECRET_CODE}"

    client.agents.messages.create(
        agent_id=agent.id,
        messages=answer([{"type": "approval", "approve": False, "tool_call_id": tool_call_id, "reason": reason}]),
    )

    messages = client.agents.messages.list(agent_id=agent.id, after=last_message_id)
    assert [m.message_type for m in messages] == [
        "approval_response_message",
        "tool_return_message",
        "reasoning_message",
        "assistant_message",
    ]
    assert messages[0].approvals[0]["approve"] is False
    assert messages[0].approvals[0]["reason"] == reason
    assert messages[1].status == "error"
    assert messages[1].tool_return == f"Error: request to call tool denied. User reason: {reason}"


def test_client_side_tool_call_request(client, agent):
    response = client.agents.messages.create(agent_id=agent.id, messages=approval_request())
    tool_call_id = response.messages[2].tool_call.tool_call_id

    messages = accumulate_chunks(
        client.agents.messages.create_stream(
            agent_id=agent.id,
            messages=answer(
                [{"type": "tool", "tool_call_id": tool_call_id, "tool_return": SECRET_CODE, "status": "success"}],
                legacy_approve=True,
            ),
        )
    )

    assert [m.message_type for m in messages] == [
        "tool_return_message",
        "reasoning_message",
        "assistant_message",
        "stop_reason",
        "usage_statistics",
    ]
    assert messages[0].tool_return == SECRET_CODE
    assert SECRET_CODE in messages[2].content

    listed = client.agents.messages.list(agent_id=agent.id, after=response.messages[0].id)
    assert listed[0].approvals[0]["type"] == "tool"
    assert listed[0].approvals[0]["tool_return"] == SECRET_CODE
    assert listed[1].tool_return == SECRET_CODE


def test_parallel_tool_calling(client, agent):
    response = client.agents.messages.create(
        agent_id=agent.id, messages=[MessageCreate(role="user", content=PARALLEL_CONTENT, otid=str(uuid.uuid4()))]
    )
    messages = response.messages
    assert [m.message_type for m in messages] == [
        "reasoning_message",
        "assistant_message",
        "tool_call_message",
        "approval_request_message",
    ]
    assert len(messages[2].tool_calls) == 1
    assert messages[2].tool_calls[0]["name"] == "roll_dice_tool"
    assert "6" in messages[2].tool_calls[0]["arguments"]
    dice_id = messages[2].tool_calls[0]["tool_call_id"]
    gated = messages[3].tool_calls
    assert [c["name"] for c in gated] == ["get_secret_code_tool"] * 3
    assert ["hello world" in gated[0]["arguments"], "hello letta" in gated[1]["arguments"]] == [True, True]
    client.agents.context.retrieve(agent_id=agent.id)

    response = client.agents.messages.create(
        agent_id=agent.id,
        messages=answer(
            [
                {"type": "approval", "approve": True, "tool_call_id": gated[0]["tool_call_id"]},
                {"type": "approval", "approve": False, "tool_call_id": gated[1]["tool_call_id"]},
                {
                    "type": "tool",
                    "tool_call_id": gated[2]["tool_call_id"],
                    "tool_return": SECRET_CODE,
                    "status": "success",
                },
            ]
        ),
    )

    tool_return = response.messages[0]
    assert tool_return.message_type == "tool_return_message"
    returns = {r["tool_call_id"]: r for r in tool_return.tool_returns}
    assert set(returns) == {dice_id, *(c["tool_call_id"] for c in gated)}
    assert returns[gated[0]["tool_call_id"]]["status"] == "success"
    assert returns[gated[1]["tool_call_id"]]["status"] == "error"
    assert returns[gated[2]["tool_call_id"]]["tool_return"] == SECRET_CODE
    assert returns[dice_id]["status"] == "success"
    assert [r["tool_call_id"] for r in tool_return.tool_returns][:2] == [
        gated[2]["tool_call_id"],
        gated[1]["tool_call_id"],
    ]
    assert response.stop_reason.stop_reason == "end_turn"
