"""Archival memory over ``/v1/agents/{id}/archival-memory``: insert, list, search, delete."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents.models import Agent, Passage
from tests.conftest import Cast
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(cast: Cast) -> Agent:
    return AgentFactory(organization=cast.org_a, name="archivist", embedding="demo/hashed-256")


def insert(api: APIClient, agent: Agent, text: str, **fields: object) -> dict:
    response = api.post(f"/v1/agents/{agent.public_id}/archival-memory", {"text": text, **fields}, format="json")
    assert response.status_code == 200, response.content
    [passage] = response.json()
    return passage


def test_a_passage_is_inserted_as_a_list_and_listed_oldest_first(alice_api: APIClient, agent: Agent) -> None:
    first = insert(alice_api, agent, "Alice was born in Oxford.", tags=["bio"])
    second = insert(alice_api, agent, "Alice likes green tea.")

    listed = alice_api.get(f"/v1/agents/{agent.public_id}/archival-memory").json()
    newest = alice_api.get(f"/v1/agents/{agent.public_id}/archival-memory?ascending=false&limit=1").json()
    after = alice_api.get(f"/v1/agents/{agent.public_id}/archival-memory?after={first['id']}").json()
    filtered = alice_api.get(f"/v1/agents/{agent.public_id}/archival-memory?search=tea").json()

    assert first["id"].startswith("passage-") and first["tags"] == ["bio"] and first["agent_id"] == agent.public_id
    assert [p["id"] for p in listed] == [first["id"], second["id"]]
    assert [p["id"] for p in newest] == [second["id"]]
    assert [p["id"] for p in after] == [second["id"]]
    assert [p["text"] for p in filtered] == ["Alice likes green tea."]


def test_search_answers_lettas_results_and_count_best_match_first(alice_api: APIClient, agent: Agent) -> None:
    insert(alice_api, agent, "The weather in Oxford was rainy.")
    insert(alice_api, agent, "Alice likes green tea with honey.", tags=["food"])
    insert(alice_api, agent, "Green is Alice's favourite colour.", tags=["colour"])

    found = alice_api.get(f"/v1/agents/{agent.public_id}/archival-memory/search?query=green tea").json()

    assert found["count"] == 2
    assert [r["content"] for r in found["results"]] == [
        "Alice likes green tea with honey.",
        "Green is Alice's favourite colour.",
    ]
    assert set(found["results"][0]) == {"timestamp", "content", "tags"}
    assert found["results"][0]["tags"] == ["food"]


def test_search_filters_by_tags_dates_and_top_k(alice_api: APIClient, agent: Agent) -> None:
    insert(alice_api, agent, "tea one", tags=["a"], created_at="2024-01-01T00:00:00Z")
    insert(alice_api, agent, "tea two", tags=["a", "b"], created_at="2024-06-01T00:00:00Z")
    insert(alice_api, agent, "tea three", tags=["b"], created_at="2025-01-01T00:00:00Z")
    base = f"/v1/agents/{agent.public_id}/archival-memory/search?query=tea"

    def contents(query: str) -> list[str]:
        return sorted(r["content"] for r in alice_api.get(base + query).json()["results"])

    assert contents("&tags=a") == ["tea one", "tea two"]
    assert contents("&tags=a&tags=b&tag_match_mode=all") == ["tea two"]
    assert contents("&start_datetime=2024-03-01T00:00:00Z&end_datetime=2024-12-31T00:00:00Z") == ["tea two"]
    assert len(alice_api.get(base + "&top_k=1").json()["results"]) == 1


def test_search_without_a_query_is_a_422(alice_api: APIClient, agent: Agent) -> None:
    assert alice_api.get(f"/v1/agents/{agent.public_id}/archival-memory/search").status_code == 422


def test_a_passage_is_deleted_once(alice_api: APIClient, agent: Agent) -> None:
    passage = insert(alice_api, agent, "temporary")

    deleted = alice_api.delete(f"/v1/agents/{agent.public_id}/archival-memory/{passage['id']}")
    again = alice_api.delete(f"/v1/agents/{agent.public_id}/archival-memory/{passage['id']}")

    assert deleted.status_code == 200
    assert again.status_code == 404
    assert not Passage.objects.exists()


def test_a_blank_text_is_a_422(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.post(f"/v1/agents/{agent.public_id}/archival-memory", {"text": "   "}, format="json")

    assert response.status_code == 422
