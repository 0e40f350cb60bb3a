"""A real MCP server asks the person for input mid-call (elicitation): the run stops for approval with the
question, and the person's answer, over the API, reaches the server when the call runs again."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from agents.models import Message, Run
from tests.mcp_servers.test_mcp_agents import agent_with, of_type, send

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.test import APIClient

    from agents.models import Agent
    from tests.conftest import Cast
    from tests.mcp_servers.conftest import RunningServer

pytestmark = pytest.mark.django_db


def answer(api: APIClient, agent: Agent, call_id: str, *, approve: bool, reason: str | None) -> Any:
    item = {"type": "approval", "tool_call_id": call_id, "approve": approve, "reason": reason}
    return api.post(f"/v1/agents/{agent.public_id}/messages", {"messages": [{"approvals": [item]}]}, format="json")


@pytest.fixture
def asked(alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]) -> tuple[Agent, dict[str, Any]]:
    """An agent whose call of ``confirm_delete`` waits for the person's answer, and its approval request."""
    agent = agent_with(cast.org_a, "stateful", mcp_server("stateful").url)
    body = send(alice_api, agent, "call confirm_delete with path=/tmp/report")
    assert body["stop_reason"]["stop_reason"] == "requires_approval", body
    [request] = of_type(body, "approval_request_message")
    return agent, request


def test_a_server_asking_for_input_stops_the_run_for_approval_of_the_same_call(
    alice_api: APIClient, asked: tuple[Agent, dict[str, Any]]
) -> None:
    agent, request = asked

    assert request["tool_call"]["name"] == "confirm_delete"
    assert json.loads(request["tool_call"]["arguments"]) == {"path": "/tmp/report"}
    [question] = request["elicitations"]
    assert question["tool_call_id"] == request["tool_call"]["tool_call_id"]
    assert (question["server"], question["message"]) == ("stateful", "Delete /tmp/report?")
    assert [(f["name"], f["kind"], f["required"]) for f in question["fields"]] == [
        ("confirm", "boolean", True),
        ("reason", "string", True),
    ]
    assert Run.objects.get(agent=agent).stop_reason == "requires_approval"
    assert not Message.objects.filter(agent=agent, role="tool").exists()
    shown = alice_api.get(f"/v1/agents/{agent.public_id}", {"include": "agent.pending_approval"}).json()
    assert shown["pending_approval"]["elicitations"][0]["message"] == "Delete /tmp/report?"
    pending = alice_api.get("/v1/approvals/pending").json()
    assert [p["approval_request_message"]["elicitations"][0]["message"] for p in pending] == ["Delete /tmp/report?"]


def test_an_answer_over_the_api_runs_the_call_again_and_the_server_receives_it(
    alice_api: APIClient, asked: tuple[Agent, dict[str, Any]]
) -> None:
    agent, request = asked
    call_id = request["tool_call"]["tool_call_id"]

    response = answer(alice_api, agent, call_id, approve=True, reason=json.dumps({"confirm": True, "reason": "old"}))

    assert response.status_code == 200, response.content
    [result] = of_type(response.json(), "tool_return_message")
    assert result["tool_call_id"] == call_id
    assert (result["status"], result["tool_return"]) == (
        "success",
        "accept: confirm=True reason='old' path=/tmp/report",
    )
    [decision] = Message.objects.get(agent=agent, role="approval").approvals
    assert (decision["approve"], decision["decided_by"], decision["transport"]) == (True, "API key test", "api")


def test_declining_sends_decline_to_the_server(alice_api: APIClient, asked: tuple[Agent, dict[str, Any]]) -> None:
    agent, request = asked

    response = answer(alice_api, agent, request["tool_call"]["tool_call_id"], approve=False, reason="not now")

    [result] = of_type(response.json(), "tool_return_message")
    assert result["tool_return"] == "decline: nothing deleted at /tmp/report"


def test_cancelling_sends_cancel_to_the_server(alice_api: APIClient, asked: tuple[Agent, dict[str, Any]]) -> None:
    agent, request = asked

    response = answer(alice_api, agent, request["tool_call"]["tool_call_id"], approve=False, reason="cancel")

    [result] = of_type(response.json(), "tool_return_message")
    assert result["tool_return"] == "cancel: nothing deleted at /tmp/report"


@pytest.mark.parametrize(
    ("reason", "names"),
    [
        (json.dumps({"confirm": True}), "reason"),
        (json.dumps({"confirm": "maybe", "reason": "x"}), "confirm"),
        (json.dumps({"confirm": True, "reason": "x", "extra": 1}), "extra"),
        ("not json", "JSON object"),
    ],
)
def test_an_answer_that_does_not_fit_the_requested_schema_is_a_400(
    alice_api: APIClient, asked: tuple[Agent, dict[str, Any]], reason: str, names: str
) -> None:
    agent, request = asked

    response = answer(alice_api, agent, request["tool_call"]["tool_call_id"], approve=True, reason=reason)

    assert response.status_code == 400, response.content
    assert names in response.json()["detail"]
    assert Run.objects.filter(agent=agent).count() == 1
    assert alice_api.get(f"/v1/agents/{agent.public_id}", {"include": "agent.pending_approval"}).json()[
        "pending_approval"
    ]


def test_another_organization_cannot_answer_the_question(
    alice_api: APIClient, charlie_api: APIClient, asked: tuple[Agent, dict[str, Any]]
) -> None:
    agent, request = asked

    response = answer(
        charlie_api, agent, request["tool_call"]["tool_call_id"], approve=True, reason='{"confirm":true,"reason":"x"}'
    )

    assert response.status_code == 404
    assert charlie_api.get("/v1/approvals/pending").json() == []
    assert Run.objects.filter(agent=agent).count() == 1


def test_a_different_question_on_the_second_call_is_a_tool_error(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    agent = agent_with(cast.org_a, "stateful", mcp_server("stateful").url)
    body = send(alice_api, agent, "call ask_twice with topic=elicitation-test")
    [request] = of_type(body, "approval_request_message")
    assert request["elicitations"][0]["message"] == "Question 1 about elicitation-test?"

    response = answer(alice_api, agent, request["tool_call"]["tool_call_id"], approve=True, reason='{"confirm":true}')

    [result] = of_type(response.json(), "tool_return_message")
    assert result["status"] == "error"
    assert (
        'asked again while calling ask_twice (elicitation: "Question 2 about elicitation-test?")'
        in (result["tool_return"])
    )
    assert response.json()["stop_reason"]["stop_reason"] == "end_turn"
