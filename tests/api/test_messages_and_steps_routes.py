"""The organization's messages (``GET /v1/messages/``, ``POST /v1/messages/search``) and step feedback and metrics."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.models import Agent, Message, Step
from tests.conftest import Cast

pytestmark = pytest.mark.django_db


def turn(api: APIClient, agent: Agent, text: str) -> None:
    response = api.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": text}]}, format="json"
    )
    assert response.status_code == 200, response.content


def row_ids(messages: list[dict]) -> list[str]:
    return list(dict.fromkeys(message["id"] for message in messages))


@pytest.fixture
def agents(cast: Cast, alice_api: APIClient) -> tuple[Agent, Agent]:
    first = services.agent_create(organization=cast.org_a, name="first", model="demo/echo-1")
    second = services.agent_create(organization=cast.org_a, name="second", model="demo/echo-1")
    turn(alice_api, first, "hello about walruses")
    turn(alice_api, second, "a question about penguins")
    return first, second


def test_the_organizations_messages_are_listed_across_agents_in_pages_oldest_first(
    alice_api: APIClient, charlie_api: APIClient, agents: tuple[Agent, Agent]
) -> None:
    everything = alice_api.get("/v1/messages/").json()
    newest_two = alice_api.get("/v1/messages/?limit=2").json()
    oldest = alice_api.get("/v1/messages/?limit=1&order=asc").json()
    after = alice_api.get(f"/v1/messages/?after={oldest[0]['id']}&order=asc").json()
    users = alice_api.get("/v1/messages/?include_return_message_types=user_message").json()

    stored = Message.objects.exclude(role="system").order_by("created_at", "pk")
    assert {m["id"] for m in everything} == {row.public_id for row in stored}
    assert {row.agent_id for row in stored} == {agent.pk for agent in agents}
    rows = [row.public_id for row in stored]  # ``limit`` counts rows; a row may show as several LettaMessages
    assert row_ids(everything) == rows
    assert row_ids(newest_two) == rows[-2:]
    assert row_ids(oldest) == rows[:1]
    assert row_ids(after) == rows[1:]
    said = [m["content"] for m in users if "login" not in m["content"]]  # each agent's login notice aside
    assert said == ["hello about walruses", "a question about penguins"]
    assert {m["message_type"] for m in users} == {"user_message"}
    assert charlie_api.get("/v1/messages/").json() == []
    assert alice_api.get("/v1/messages/?conversation_id=conv-nope").json() == []


def test_message_search_finds_user_and_assistant_text_by_agent_and_never_another_orgs(
    alice_api: APIClient, charlie_api: APIClient, agents: tuple[Agent, Agent]
) -> None:
    first, second = agents

    hits = alice_api.post("/v1/messages/search", {"query": "penguins"}, format="json").json()
    scoped = alice_api.post(
        "/v1/messages/search", {"query": "penguins", "agent_id": first.public_id}, format="json"
    ).json()
    missing = alice_api.post("/v1/messages/search", {}, format="json")

    assert hits and {hit["agent_id"] for hit in hits} == {second.public_id}
    user = next(hit for hit in hits if hit["message_type"] == "user_message")
    assert set(user) == {"message_type", "content", "message_id", "agent_id", "conversation_id", "created_at"}
    assert user["content"] == "a question about penguins" and user["message_id"].startswith("message-")
    assert scoped == []
    assert missing.status_code == 422
    assert charlie_api.post("/v1/messages/search", {"query": "penguins"}, format="json").json() == []


def test_step_feedback_is_set_overwritten_and_filtered_and_metrics_answer_nanoseconds(
    alice_api: APIClient, agents: tuple[Agent, Agent]
) -> None:
    step = Step.objects.filter(agent=agents[0]).first()
    url = f"/v1/steps/{step.public_id}"

    liked = alice_api.patch(f"{url}/feedback", {"feedback": "positive", "tags": ["helpful"]}, format="json").json()
    positive = alice_api.get("/v1/steps/?feedback=positive").json()
    without = alice_api.get("/v1/steps/?has_feedback=false").json()
    cleared = alice_api.patch(f"{url}/feedback", {}, format="json").json()
    metrics = alice_api.get(f"{url}/metrics").json()

    assert (liked["feedback"], liked["tags"]) == ("positive", ["helpful"])
    assert [s["id"] for s in positive] == [step.public_id]
    assert step.public_id not in {s["id"] for s in without}
    assert (cleared["feedback"], cleared["tags"]) == (None, ["helpful"])  # tags stay unless new ones are given
    assert alice_api.patch(f"{url}/feedback", {"feedback": "meh"}, format="json").status_code == 422
    assert (metrics["id"], metrics["run_id"], metrics["agent_id"]) == (
        step.public_id,
        f"run-{step.run_id}",
        agents[0].public_id,
    )
    assert metrics["step_start_ns"] > 1_600_000_000 * 10**9
    assert metrics["step_ns"] is None or metrics["step_ns"] >= 0
