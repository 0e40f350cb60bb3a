"""Approvals beyond Letta through the API (DESIGN §13): edited arguments, always-allow, policies, the audit."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from agents import services
from agents.chat import actions as chat
from agents.models import Agent, Message, Run
from tests.fake_llm.script import Reply
from tests.support.api import api_client
from tests.support.polling import poll
from tests.tool_sources import DICE_SOURCE, SECRET_SOURCE
from tools.models import AgentTool
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_agent(cast) -> Agent:
    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE, default_requires_approval=True)
    secret = tool_upsert_from_source(organization=cast.org_a, source_code=SECRET_SOURCE, default_requires_approval=True)
    return services.agent_create(
        organization=cast.org_a, name="demo", model="demo/echo-1", tool_ids=[dice.public_id, secret.public_id]
    )


def send(api: APIClient, agent: Agent, text: str) -> dict[str, Any]:
    response = api.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": text}]}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def answer(api: APIClient, agent: Agent, *items: dict[str, Any]) -> Any:
    return api.post(
        f"/v1/agents/{agent.public_id}/messages",
        {"messages": [{"approvals": [{"type": "approval", **item} for item in items]}]},
        format="json",
    )


def tool_returns(body: dict[str, Any]) -> list[str]:
    return [m["tool_return"] for m in body["messages"] if m["message_type"] == "tool_return_message"]


def pending_call_id(body: dict[str, Any]) -> str:
    request = body["messages"][-1]
    assert request["message_type"] == "approval_request_message"
    return request["tool_call"]["tool_call_id"]


def approval_items(api: APIClient, agent: Agent) -> list[dict[str, Any]]:
    listed = api.get(f"/v1/agents/{agent.public_id}/messages", {"limit": 100}).json()
    [response] = [m for m in listed if m["message_type"] == "approval_response_message"]
    return response["approvals"]


# --- edit and approve -----------------------------------------------------------------------------------


def test_an_approval_with_edited_arguments_runs_the_tool_with_them_and_keeps_the_original(cast, demo_agent):
    key, raw = ApiKey.issue(organization=cast.org_a, created_by=cast.alice, name="ci-bot")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    call_id = pending_call_id(send(api, demo_agent, "call get_secret_code with input_text=hi"))

    response = answer(api, demo_agent, {"approve": True, "tool_call_id": call_id, "arguments": {"input_text": "bye"}})

    assert response.status_code == 200, response.content
    [tool_return, *_] = [m for m in response.json()["messages"] if m["message_type"] == "tool_return_message"]
    assert tool_return["tool_return"] == "code-bye"
    [item] = approval_items(api, demo_agent)
    assert item | {"decided_at": None} == {
        "type": "approval",
        "tool_call_id": call_id,
        "approve": True,
        "reason": None,
        "original_arguments": {"input_text": "hi"},
        "arguments": {"input_text": "bye"},
        "always_allow": False,
        "decided_by": "API key ci-bot",
        "decided_by_user_id": None,
        "decided_by_api_key_id": key.pk,
        "decided_at": None,
        "transport": "api",
    }
    assert datetime.fromisoformat(item["decided_at"]).tzinfo is not None
    # The model's own call is kept as it wrote it.
    listed = api.get(f"/v1/agents/{demo_agent.public_id}/messages", {"limit": 100}).json()
    [request] = [m for m in listed if m["message_type"] == "approval_request_message"]
    assert json.loads(request["tool_call"]["arguments"]) == {"input_text": "hi"}


def test_edited_arguments_are_coerced_to_the_tools_schema(alice_api, demo_agent):
    call_id = pending_call_id(send(alice_api, demo_agent, "call roll_dice with num_sides=6"))

    response = answer(
        alice_api, demo_agent, {"approve": True, "tool_call_id": call_id, "arguments": {"num_sides": "20"}}
    )

    assert response.status_code == 200, response.content
    assert tool_returns(response.json()) == ["20"]
    assert approval_items(alice_api, demo_agent)[0]["arguments"] == {"num_sides": 20}


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"num_sides": "many"}, "'num_sides' must be of type integer"),
        ({}, "missing required argument 'num_sides'"),
        ({"num_sides": 6, "sides": 6}, "unexpected argument 'sides'"),
    ],
)
def test_edited_arguments_that_do_not_fit_the_schema_are_a_400_naming_the_argument(
    alice_api, demo_agent, arguments, named
):
    call_id = pending_call_id(send(alice_api, demo_agent, "call roll_dice with num_sides=6"))

    response = answer(alice_api, demo_agent, {"approve": True, "tool_call_id": call_id, "arguments": arguments})

    assert response.status_code == 400
    assert named in response.json()["detail"]
    assert response.json()["detail"].startswith("INVALID_ARGUMENT: Edited arguments of call ")
    assert not Message.objects.filter(agent=demo_agent, role="approval").exists()
    # Still waiting: a valid answer goes through.
    assert answer(alice_api, demo_agent, {"approve": True, "tool_call_id": call_id}).status_code == 200


def test_edited_arguments_are_refused_before_a_background_run_starts(alice_api, demo_agent):
    call_id = pending_call_id(send(alice_api, demo_agent, "call roll_dice with num_sides=6"))

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages/async",
        {
            "messages": [
                {
                    "approvals": [
                        {"type": "approval", "approve": True, "tool_call_id": call_id, "arguments": {"num_sides": "x"}}
                    ]
                }
            ]
        },
        format="json",
    )

    assert response.status_code == 400
    assert "'num_sides' must be of type integer" in response.json()["detail"]
    assert Run.objects.filter(agent=demo_agent).count() == 1


@pytest.mark.parametrize("field", ["arguments", "always_allow"])
def test_edits_and_always_allow_come_only_with_an_approval(alice_api, demo_agent, field):
    call_id = pending_call_id(send(alice_api, demo_agent, "call roll_dice with num_sides=6"))
    value = {"num_sides": 3} if field == "arguments" else True

    response = answer(alice_api, demo_agent, {"approve": False, "tool_call_id": call_id, field: value})

    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "messages", 0, "approvals", 0, field]
    assert error["msg"] == f"'{field}' is only allowed when 'approve' is true."


def test_arguments_must_be_an_object(alice_api, demo_agent):
    call_id = pending_call_id(send(alice_api, demo_agent, "call roll_dice with num_sides=6"))

    response = answer(alice_api, demo_agent, {"approve": True, "tool_call_id": call_id, "arguments": [6]})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "messages", 0, "approvals", 0, "arguments"]


def test_the_model_is_shown_the_edited_call(alice_api, cast, settings, fake_llm):
    settings.OPENAI_BASE_URL = fake_llm.base_url_openai
    settings.OPENAI_API_KEY = "sk-test"
    secret = tool_upsert_from_source(organization=cast.org_a, source_code=SECRET_SOURCE, default_requires_approval=True)
    agent = services.agent_create(
        organization=cast.org_a, name="gpt", model="openai/gpt-4o-mini", tool_ids=[secret.public_id]
    )
    fake_llm.script(Reply(tool_calls=[("get_secret_code", {"input_text": "hi"})]), Reply(text="Done."))
    call_id = pending_call_id(send(alice_api, agent, "Get the code for hi."))

    response = answer(alice_api, agent, {"approve": True, "tool_call_id": call_id, "arguments": {"input_text": "bye"}})

    assert response.status_code == 200, response.content
    messages = fake_llm.requests[-1].body["messages"]
    [assistant] = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"input_text": "bye"}
    [result] = [m for m in messages if m["role"] == "tool"]
    assert "code-bye" in result["content"]
    assert '"hi"' not in json.dumps(messages[-2:])


def test_clients_that_send_no_edits_get_lettas_fields_and_an_unedited_audit(alice_api, demo_agent):
    call_id = pending_call_id(send(alice_api, demo_agent, "call get_secret_code with input_text=hi"))

    response = answer(alice_api, demo_agent, {"approve": False, "tool_call_id": call_id, "reason": "not now"})

    assert response.status_code == 200
    [item] = approval_items(alice_api, demo_agent)
    assert {k: item[k] for k in ("approve", "reason", "original_arguments", "arguments", "always_allow")} == {
        "approve": False,
        "reason": "not now",
        "original_arguments": None,
        "arguments": None,
        "always_allow": False,
    }
    assert item["decided_by"] == "API key test" and item["transport"] == "api"


# --- always allow and policies ------------------------------------------------------------------------


def test_always_allow_approves_and_stops_asking_for_that_tool(alice_api, demo_agent):
    call_id = pending_call_id(send(alice_api, demo_agent, "call roll_dice with num_sides=6"))

    response = answer(alice_api, demo_agent, {"approve": True, "tool_call_id": call_id, "always_allow": True})

    assert response.status_code == 200
    assert tool_returns(response.json()) == ["6"]
    link = AgentTool.objects.get(agent=demo_agent, tool__name="roll_dice")
    assert (link.approval_policy, link.requires_approval) == ("allow", False)
    assert approval_items(alice_api, demo_agent)[0]["always_allow"] is True
    again = send(alice_api, demo_agent, "call roll_dice with num_sides=4")
    assert again["stop_reason"]["stop_reason"] == "end_turn"
    assert tool_returns(again) == ["4"]
    # The agent state says so, as Letta's approval endpoint would have.
    rules = alice_api.get(f"/v1/agents/{demo_agent.public_id}").json()["tool_rules"]
    assert {r["tool_name"] for r in rules if r["type"] == "requires_approval"} == {"get_secret_code"}


def test_the_letta_approval_endpoint_writes_the_policy(alice_api, demo_agent):
    url = f"/v1/agents/{demo_agent.public_id}/tools/approval/roll_dice"

    alice_api.patch(f"{url}?requires_approval=false")
    assert AgentTool.objects.get(agent=demo_agent, tool__name="roll_dice").approval_policy == "allow"
    alice_api.patch(f"{url}?requires_approval=true")
    assert AgentTool.objects.get(agent=demo_agent, tool__name="roll_dice").approval_policy == "ask"


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("call roll_dice with num_sides=6", False),
        ("call roll_dice with num_sides=100", True),
    ],
)
def test_an_ask_when_policy_asks_only_when_its_condition_holds(alice_api, demo_agent, text, asks):
    services.agent_set_tool_policy(
        agent=demo_agent, tool_name="roll_dice", policy="ask_when", condition="num_sides > 20"
    )

    body = send(alice_api, demo_agent, text)

    assert (body["stop_reason"]["stop_reason"] == "requires_approval") is asks
    assert any(m["message_type"] == "tool_return_message" for m in body["messages"]) is not asks


def test_a_condition_that_cannot_be_evaluated_asks(alice_api, demo_agent):
    services.agent_set_tool_policy(
        agent=demo_agent, tool_name="roll_dice", policy="ask_when", condition='num_sides startswith "1"'
    )

    body = send(alice_api, demo_agent, "call roll_dice with num_sides=6")

    assert body["stop_reason"]["stop_reason"] == "requires_approval"


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        ("num_sides >", "expected an argument name or a value"),
        ("sides > 3", "the tool has no argument 'sides'"),
        ("", "needs a condition"),
        ("__import__('os')", "expected 'and', 'or' or the end, found '('"),
    ],
)
def test_an_invalid_condition_is_refused_when_it_is_set(demo_agent, condition, problem):
    with pytest.raises(services.InvalidArgument) as refused:
        services.agent_set_tool_policy(agent=demo_agent, tool_name="roll_dice", policy="ask_when", condition=condition)

    assert problem in str(refused.value)
    assert AgentTool.objects.get(agent=demo_agent, tool__name="roll_dice").approval_policy == "inherit"


# --- the audit ------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_decision_from_the_chat_records_the_person_and_the_chat(cast, demo_agent, settings):
    settings.RUN_EXECUTOR = "inprocess"  # the chat's run executes here, not on a Celery worker
    alice_api = api_client(cast.org_a, cast.alice)
    call_id = pending_call_id(send(alice_api, demo_agent, "call get_secret_code with input_text=hi"))

    run = chat.chat_approve(
        agent=demo_agent,
        user=cast.alice,
        approvals=[chat.ApprovalItem(tool_call_id=call_id, approve=False, reason="no")],
    )

    poll(lambda: Run.objects.get(pk=run.pk), lambda run: run.status == "completed")
    [item] = Message.objects.get(agent=demo_agent, role="approval").approvals
    assert (item["decided_by"], item["decided_by_user_id"], item["decided_by_api_key_id"], item["transport"]) == (
        cast.alice.email,
        cast.alice.pk,
        None,
        "chat",
    )
