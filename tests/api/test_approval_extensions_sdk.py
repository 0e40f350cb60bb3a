"""The approval extensions (DESIGN §13) through letta-client 0.1.324 against a live server.

A Letta client that never sends ``arguments`` sees Letta's wire; one that does gets the
edited call run, and every client parses the audit fields as extra fields it may ignore.
(letta-client 1.x: ``tests/sdk/driver.py::edit_and_approve_then_read_the_audit``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from letta_client import ApprovalCreate, Letta, MessageCreate
from letta_client.core.api_error import ApiError

from tests.support.live_server import start_live_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from letta_client import AgentState

    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]


ASK = "Call the get_secret_code_tool to get the code for text 'hello world'."


def get_secret_code_tool(input_text: str) -> str:
    """
    Return the secret code for a text.
    Args:
        input_text (str): The input text to process.
    Returns:
        str: The secret code.
    """
    return "code-" + input_text


@pytest.fixture(scope="module")
def extensions_server(tmp_path_factory, fake_llm_server) -> Iterator[LiveServer]:
    env = fake_llm_server.server_env()
    with start_live_server(tmp_path_factory.mktemp("approval-extensions"), extra_env=env) as server:
        yield server


@pytest.fixture(scope="module")
def client(extensions_server: LiveServer) -> Letta:
    return Letta(base_url=extensions_server.url, token=extensions_server.api_key)


@pytest.fixture
def agent(client: Letta) -> Iterator[AgentState]:
    tool = client.tools.upsert_from_function(func=get_secret_code_tool, default_requires_approval=True)
    state = client.agents.create(
        name="extensions",
        include_base_tools=False,
        tool_ids=[tool.id],
        model="anthropic/claude-sonnet-4-5-20250929",
        embedding="openai/text-embedding-3-small",
    )
    yield state
    client.agents.delete(agent_id=state.id)


def pending_call(client: Letta, agent: AgentState) -> str:
    response = client.agents.messages.create(agent_id=agent.id, messages=[MessageCreate(role="user", content=ASK)])
    [request] = [m for m in response.messages if m.message_type == "approval_request_message"]
    return request.tool_call.tool_call_id


def approval_create(item: dict) -> ApprovalCreate:
    """0.1.324 requires the legacy fields too; ``approvals`` wins over them."""
    return ApprovalCreate(approve=item["approve"], approval_request_id=item["tool_call_id"], approvals=[item])


def test_an_edited_approval_runs_the_edited_call_and_the_sdk_reads_the_audit(client: Letta, agent) -> None:
    call_id = pending_call(client, agent)
    approval = {"type": "approval", "approve": True, "tool_call_id": call_id, "arguments": {"input_text": "edited"}}

    answered = client.agents.messages.create(agent_id=agent.id, messages=[approval_create(approval)])

    assert answered.messages[0].message_type == "tool_return_message"
    assert answered.messages[0].tool_return == "code-edited"
    [response] = [
        m
        for m in client.agents.messages.list(agent_id=agent.id, limit=50)
        if m.message_type == "approval_response_message"
    ]
    # 0.1.324 declares no ``approvals``: the list, like the audit in it, is an extra it keeps as parsed JSON.
    [item] = response.approvals
    assert (item["approve"], item["tool_call_id"]) == (True, call_id)
    assert item["arguments"] == {"input_text": "edited"}
    assert item["original_arguments"] == {"input_text": "hello world"}
    assert item["transport"] == "api" and item["decided_by"].startswith("API key ")


def test_a_plain_letta_approval_sees_lettas_fields_and_the_audit_as_extras(client: Letta, agent) -> None:
    call_id = pending_call(client, agent)

    client.agents.messages.create(
        agent_id=agent.id,
        messages=[approval_create({"type": "approval", "approve": False, "tool_call_id": call_id, "reason": "no"})],
    )

    [response] = [
        m
        for m in client.agents.messages.list(agent_id=agent.id, limit=50)
        if m.message_type == "approval_response_message"
    ]
    assert (response.approve, response.approval_request_id, response.reason) == (False, call_id, "no")
    [item] = response.approvals
    assert item["arguments"] is None and item["original_arguments"] is None


def test_a_bad_edit_is_an_api_error_naming_the_argument(client: Letta, agent) -> None:
    call_id = pending_call(client, agent)
    approval = {"type": "approval", "approve": True, "tool_call_id": call_id, "arguments": {"text": "x"}}

    with pytest.raises(ApiError) as refused:
        client.agents.messages.create(agent_id=agent.id, messages=[approval_create(approval)])

    assert refused.value.status_code == 400
    assert "Edited arguments of call" in str(refused.value.body) and "'input_text'" in str(refused.value.body)
