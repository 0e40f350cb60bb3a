"""``POST /v1/agents/{id}/summarize``: a compaction on request, as 0.1.324 and 1.x send it."""

from __future__ import annotations

import pytest

from agents import services
from agents.engine.compaction import summary_of
from agents.llm.base import LLMOverloaded
from agents.memory import compaction
from agents.models import Agent, Message, RunStatus
from tests.factories import RunFactory
from tests.fakes import ScriptedLLM, reply


@pytest.fixture
def chatty_agent(cast, alice_api):
    agent = services.agent_create(organization=cast.org_a, name="Chatty", model="demo/echo-1")
    for turn in range(8):
        response = alice_api.post(
            f"/v1/agents/{agent.public_id}/messages", {"input": f"Turn {turn}: the sky is blue."}, format="json"
        )
        assert response.status_code == 200
    return agent


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("query", "body"), [("?max_message_length=10", None), ("", {}), ("", {"compaction_settings": {}})]
)
def test_it_summarizes_the_older_messages_and_says_how_many_remain(alice_api, chatty_agent, query, body):
    before = Message.objects.filter(agent=chatty_agent).count()

    response = alice_api.post(f"/v1/agents/{chatty_agent.public_id}/summarize{query}", body, format="json")

    assert response.status_code == 200
    answer = response.json()
    assert answer["summary"].startswith("(demo summary)")
    assert answer["num_messages_after"] < answer["num_messages_before"]
    agent = Agent.objects.get(pk=chatty_agent.pk)
    context = list(Message.objects.in_context(agent))
    assert len(context) == answer["num_messages_after"]
    assert summary_of(context[1].snapshot()) == answer["summary"]
    assert Message.objects.filter(agent=agent).count() == before + 1  # evicted rows stay listed


@pytest.mark.django_db
def test_it_is_refused_while_a_run_is_active(alice_api, cast):
    agent = services.agent_create(organization=cast.org_a, name="Busy", model="demo/echo-1")
    RunFactory(agent=agent, status=RunStatus.QUEUED)

    response = alice_api.post(f"/v1/agents/{agent.public_id}/summarize", {}, format="json")

    assert response.status_code == 409
    assert response["x-should-retry"] == "false"


@pytest.mark.django_db(transaction=True)
def test_a_conversation_too_short_to_summarize_is_left_as_it_is(alice_api, cast):
    agent = services.agent_create(organization=cast.org_a, name="New", model="demo/echo-1")

    response = alice_api.post(f"/v1/agents/{agent.public_id}/summarize", {}, format="json")

    assert response.status_code == 200
    assert response.json()["summary"] is None
    assert response.json()["num_messages_before"] == response.json()["num_messages_after"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (LLMOverloaded("Overloaded", status_code=529), "Summarizing the conversation failed: Overloaded"),
        (reply(""), "The model returned an empty summary of the conversation."),
    ],
    ids=["model-error", "empty-summary"],
)
def test_a_summary_the_model_cannot_give_is_a_conflict_and_leaves_the_context(
    alice_api, chatty_agent, monkeypatch, answer, detail
):
    model = ScriptedLLM([answer])
    monkeypatch.setattr(compaction, "get_llm_client", lambda handle, organization: (model, "echo-1"))
    before = list(Message.objects.in_context(Agent.objects.get(pk=chatty_agent.pk)).values_list("seq", flat=True))

    response = alice_api.post(f"/v1/agents/{chatty_agent.public_id}/summarize", {}, format="json")

    assert response.status_code == 409
    assert detail in response.json()["detail"]
    assert [r.purpose for r in model.requests] == ["summary"]
    after = Message.objects.in_context(Agent.objects.get(pk=chatty_agent.pk)).values_list("seq", flat=True)
    assert list(after) == before
