"""An approval followed by user messages in one request, over the API (LETTA_CONVERSATIONS §2)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.models import Agent, Message
from tests.fake_llm.script import Reply
from tests.tool_sources import SECRET_SOURCE
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db

CANCELLED = "User cancelled the approval"


@pytest.fixture
def claude(cast, settings, fake_llm) -> Agent:
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    secret = tool_upsert_from_source(organization=cast.org_a, source_code=SECRET_SOURCE, default_requires_approval=True)
    return services.agent_create(
        organization=cast.org_a,
        name="claude",
        model="anthropic/claude-sonnet-4-5-20250929",
        tool_ids=[secret.public_id],
    )


def post(api: APIClient, agent: Agent, messages: list[dict[str, Any]], **extra: Any) -> Any:
    return api.post(f"/v1/agents/{agent.public_id}/messages", {"messages": messages, **extra}, format="json")


def pending_call(api: APIClient, agent: Agent, fake_llm) -> str:
    fake_llm.script(Reply(tool_calls=[("get_secret_code", {"input_text": "hi"})]))
    body = post(api, agent, [{"role": "user", "content": "Get the code for hi."}]).json()
    assert body["messages"][-1]["message_type"] == "approval_request_message"
    return body["messages"][-1]["tool_call"]["tool_call_id"]


def shown(body: dict[str, Any]) -> list[str]:
    return [m["message_type"] for m in body["messages"] if m["message_type"] != "reasoning_message"]


def denial_and_message(call_id: str, text: str = "hello again") -> list[dict[str, Any]]:
    """What Letta Code sends after Esc at an approval prompt."""
    return [
        {
            "type": "approval",
            "approvals": [{"type": "approval", "tool_call_id": call_id, "approve": False, "reason": CANCELLED}],
        },
        {"type": "message", "role": "user", "content": [{"type": "text", "text": text}]},
    ]


def test_a_denial_and_a_new_message_apply_the_denial_then_answer_the_message(alice_api, claude, fake_llm):
    call_id = pending_call(alice_api, claude, fake_llm)
    fake_llm.script(Reply(text="Hello!"))

    response = post(alice_api, claude, denial_and_message(call_id))

    assert response.status_code == 200, response.content
    assert shown(response.json()) == ["tool_return_message", "assistant_message"]
    assert response.json()["stop_reason"]["stop_reason"] == "end_turn"
    # For Anthropic the text joins the ``tool_result`` user turn.
    last = fake_llm.requests[-1].body["messages"][-1]
    assert last["role"] == "user"
    kinds = [part["type"] for part in last["content"]]
    assert kinds[0] == "tool_result" and "text" in kinds
    assert CANCELLED in json.dumps(last["content"][0])
    assert "hello again" in json.dumps(last["content"][1:])
    roles = list(Message.objects.filter(agent=claude).order_by("seq").values_list("role", flat=True))
    assert roles[-4:] == ["approval", "tool", "user", "assistant"]


def test_the_same_request_resent_is_not_an_error_and_runs_the_message(alice_api, claude, fake_llm):
    call_id = pending_call(alice_api, claude, fake_llm)
    fake_llm.script(Reply(text="Hello!"), Reply(text="Hello once more!"))
    assert post(alice_api, claude, denial_and_message(call_id)).status_code == 200

    response = post(alice_api, claude, denial_and_message(call_id, "are you there?"))

    assert response.status_code == 200, response.content
    assert shown(response.json()) == ["assistant_message"]
    assert Message.objects.filter(agent=claude, role="approval").count() == 1


def test_a_resent_approval_alone_runs_a_turn_on_the_keep_alive_text(alice_api, claude, fake_llm):
    call_id = pending_call(alice_api, claude, fake_llm)
    fake_llm.script(Reply(text="Hello!"), Reply(text="Continuing."))
    assert post(alice_api, claude, denial_and_message(call_id)).status_code == 200

    response = post(alice_api, claude, denial_and_message(call_id)[:1])

    assert response.status_code == 200, response.content
    assert "Automated keep-alive ping" in json.dumps(fake_llm.requests[-1].body["messages"][-1])


def test_a_second_approval_after_the_first_is_a_400_not_dropped(alice_api, claude, fake_llm):
    call_id = pending_call(alice_api, claude, fake_llm)
    first = denial_and_message(call_id)[0]

    response = post(alice_api, claude, [first, {"role": "user", "content": "hi"}, first])

    assert response.status_code == 400
    assert "Only user messages may follow an approval" in response.json()["detail"]
    assert not Message.objects.filter(agent=claude, role="approval").exists()


def test_an_approval_after_a_user_message_is_lettas_400(alice_api, claude):
    response = post(alice_api, claude, [{"role": "user", "content": "hi"}, {"approve": True}])

    assert response.status_code == 400
    assert response.json()["detail"] == "Expected MessageCreate, got ApprovalCreate"


def test_a_denial_and_a_message_stream_the_tool_return_then_the_reply(alice_api, claude, fake_llm):
    call_id = pending_call(alice_api, claude, fake_llm)
    fake_llm.script(Reply(text="Hello!"))

    response = alice_api.post(
        f"/v1/agents/{claude.public_id}/messages/stream",
        {"messages": denial_and_message(call_id), "stream_tokens": True},
        format="json",
    )

    assert response.status_code == 200
    body = b"".join(response).decode()
    chunks = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]
    types = [c["message_type"] for c in chunks]
    assert types[0] == "tool_return_message"
    assert "assistant_message" in types and types[-2:] == ["stop_reason", "usage_statistics"]


def test_a_tool_return_given_as_text_parts_reaches_the_model_as_text(alice_api, claude, fake_llm):
    call_id = pending_call(alice_api, claude, fake_llm)
    fake_llm.script(Reply(text="Thanks."))
    parts = [{"type": "text", "text": "740845"}, {"type": "text", "text": "done"}]

    response = post(
        alice_api,
        claude,
        [
            {
                "type": "tool_return",
                "tool_returns": [{"tool_call_id": call_id, "tool_return": parts, "status": "success"}],
            }
        ],
    )

    assert response.status_code == 200, response.content
    [result] = [p for p in fake_llm.requests[-1].body["messages"][-1]["content"] if p["type"] == "tool_result"]
    assert json.dumps(result).count("740845\\ndone") == 1
    assert '"type": "text", "text": "740845"' not in json.dumps(result)
