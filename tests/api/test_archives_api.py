"""Shared archives over ``/v1/archives``, attached to agents, and ``POST /v1/passages/search``."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from agents.memory.archival import passage_insert
from agents.models import Agent, AgentArchive, Archive, Passage
from tests.conftest import Cast
from tests.factories import AgentFactory
from tests.memory.tool_calls import call

pytestmark = pytest.mark.django_db

ARCHIVE_KEYS = {
    "id",
    "name",
    "description",
    "organization_id",
    "vector_db_provider",
    "embedding_config",
    "metadata",
    "created_by_id",
    "last_updated_by_id",
    "created_at",
    "updated_at",
}


@pytest.fixture
def agent(cast: Cast) -> Agent:
    return AgentFactory(organization=cast.org_a, name="archivist", embedding="demo/hashed-256")


def create(api: APIClient, name: str, **fields: object) -> dict:
    response = api.post("/v1/archives/", {"name": name, **fields}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def add(api: APIClient, archive: dict, text: str, **fields: object) -> dict:
    response = api.post(f"/v1/archives/{archive['id']}/passages", {"text": text, **fields}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_an_archive_is_created_listed_by_name_and_cursor_retrieved_modified_and_deleted(alice_api: APIClient) -> None:
    first = create(alice_api, "papers", description="research", embedding="demo/hashed-256")
    second = create(alice_api, "notes")

    newest = alice_api.get("/v1/archives/").json()
    by_name = alice_api.get("/v1/archives/?name=papers").json()
    after = alice_api.get(f"/v1/archives/?after={second['id']}").json()
    oldest = alice_api.get("/v1/archives/?order=asc&limit=1").json()
    modified = alice_api.patch(f"/v1/archives/{first['id']}", {"name": "papers-2"}, format="json").json()
    deleted = alice_api.delete(f"/v1/archives/{first['id']}")

    assert set(first) == ARCHIVE_KEYS and first["id"].startswith("archive-")
    assert (first["vector_db_provider"], first["description"]) == ("native", "research")
    assert first["embedding_config"]["handle"] == "demo/hashed-256"
    assert [a["id"] for a in newest] == [second["id"], first["id"]]
    assert [a["id"] for a in by_name] == [first["id"]]
    assert [a["id"] for a in after] == [first["id"]]
    assert [a["id"] for a in oldest] == [first["id"]]
    assert (modified["name"], modified["description"]) == ("papers-2", "research")
    assert deleted.status_code == 204
    assert alice_api.get(f"/v1/archives/{first['id']}").status_code == 404


def test_an_unknown_embedding_handle_is_refused(alice_api: APIClient) -> None:
    response = alice_api.post("/v1/archives/", {"name": "x", "embedding": "nowhere/model"}, format="json")

    assert response.status_code == 400
    assert not Archive.objects.exists()


def test_passages_are_added_one_or_in_a_batch_embedded_with_the_archives_handle_and_deleted(
    alice_api: APIClient,
) -> None:
    archive = create(alice_api, "papers", embedding="demo/hashed-256")

    one = add(alice_api, archive, "Transformers use attention", tags=["ml"], metadata={"page": 3})
    batch = alice_api.post(
        f"/v1/archives/{archive['id']}/passages/batch",
        {"passages": [{"text": "Kittens sleep a lot"}, {"text": "Owls hunt at night", "tags": ["birds"]}]},
        format="json",
    )
    gone = alice_api.delete(f"/v1/archives/{archive['id']}/passages/{one['id']}")

    assert (one["archive_id"], one["tags"], one["metadata"], one["agent_id"]) == (
        archive["id"],
        ["ml"],
        {"page": 3},
        None,
    )
    assert one["embedding_config"]["handle"] == "demo/hashed-256"
    assert [p["text"] for p in batch.json()] == ["Kittens sleep a lot", "Owls hunt at night"]
    assert gone.status_code == 204
    assert sorted(Passage.objects.values_list("text", flat=True)) == ["Kittens sleep a lot", "Owls hunt at night"]
    assert all(len(p.embedding) == 256 for p in Passage.objects.all())
    assert alice_api.delete(f"/v1/archives/{archive['id']}/passages/{one['id']}").status_code == 404


def test_an_attached_archive_is_searched_by_the_agent_with_its_own_archive_and_detaching_stops_that(
    alice_api: APIClient, agent: Agent
) -> None:
    archive = create(alice_api, "shared", embedding="demo/hashed-256")
    add(alice_api, archive, "The shared lab notebook mentions green tea")
    passage_insert(agent=agent, text="My own memory: Alice likes green tea")
    url = f"/v1/agents/{agent.public_id}/archives"

    attached = alice_api.patch(f"{url}/attach/{archive['id']}")
    again = alice_api.patch(f"{url}/attach/{archive['id']}")
    listed = alice_api.get(f"/v1/agents/{agent.public_id}/archival-memory").json()
    found = json.loads(call(agent, "archival_memory_search", query="green tea").tool_return)
    agents = alice_api.get(f"/v1/archives/{archive['id']}/agents").json()
    by_agent = alice_api.get(f"/v1/archives/?agent_id={agent.public_id}").json()
    detached = alice_api.patch(f"{url}/detach/{archive['id']}")
    after = json.loads(call(agent, "archival_memory_search", query="green tea").tool_return)

    assert (attached.status_code, attached.json(), again.status_code) == (200, None, 200)
    assert len(listed) == 2
    assert {r["content"] for r in found} == {
        "The shared lab notebook mentions green tea",
        "My own memory: Alice likes green tea",
    }
    assert [a["id"] for a in agents] == [agent.public_id]
    assert {a["name"] for a in by_agent} == {"shared", "archivist's Archive"}
    assert (detached.status_code, detached.json()) == (200, None)
    assert [r["content"] for r in after] == ["My own memory: Alice likes green tea"]
    assert Passage.objects.count() == 2  # detaching keeps the archive's passages


def test_the_agents_own_inserts_go_to_its_own_archive_not_an_attached_one(alice_api: APIClient, agent: Agent) -> None:
    archive = create(alice_api, "shared")
    alice_api.patch(f"/v1/agents/{agent.public_id}/archives/attach/{archive['id']}")

    call(agent, "archival_memory_insert", content="a thought of my own")

    own = AgentArchive.objects.get(agent=agent, is_owner=True).archive
    assert list(own.passages.values_list("text", flat=True)) == ["a thought of my own"]
    assert own.name == "archivist's Archive" and own.embedding == "demo/hashed-256"
    assert not Passage.objects.filter(archive__name="shared").exists()


def test_passage_search_scopes_to_an_agent_an_archive_or_the_organization(
    alice_api: APIClient, charlie_api: APIClient, agent: Agent
) -> None:
    papers = create(alice_api, "papers", embedding="demo/hashed-256")
    notes = create(alice_api, "notes", embedding="demo/hashed-256")
    add(alice_api, papers, "attention is all you need", tags=["ml"])
    add(alice_api, notes, "buy oat milk and attention span", tags=["todo"])
    passage_insert(agent=agent, text="attention to detail matters")

    def search(**body: object) -> list[str]:
        response = alice_api.post("/v1/passages/search", body, format="json")
        assert response.status_code == 200, response.content
        return sorted(hit["passage"]["text"] for hit in response.json())

    everything = alice_api.post("/v1/passages/search", {"query": "attention"}, format="json").json()
    assert {hit["score"] for hit in everything} == {0.0} and len(everything) == 3
    assert search(query="attention", archive_id=papers["id"]) == ["attention is all you need"]
    assert search(query="attention", agent_id=agent.public_id) == ["attention to detail matters"]
    assert search(tags=["todo"]) == ["buy oat milk and attention span"]
    assert search(query="attention", limit=1) != []
    assert alice_api.post("/v1/passages/search", {"limit": 0}, format="json").status_code == 422
    assert charlie_api.post("/v1/passages/search", {"query": "attention"}, format="json").json() == []


def test_each_archive_is_searched_with_its_own_embedding_handle(alice_api: APIClient, cast: Cast) -> None:
    agent = AgentFactory(organization=cast.org_a, name="plain", embedding="openai/text-embedding-3-small")
    archive = create(alice_api, "demo-embedded", embedding="demo/hashed-256")
    add(alice_api, archive, "To be, or not to be")
    alice_api.patch(f"/v1/agents/{agent.public_id}/archives/attach/{archive['id']}")

    # Only stop words: full text finds nothing, the archive's (demo) embedding does; the agent's handle has no key.
    hits = alice_api.post(
        "/v1/passages/search", {"query": "to be or not to be", "agent_id": agent.public_id}, format="json"
    ).json()

    assert [hit["passage"]["text"] for hit in hits] == ["To be, or not to be"]


def test_deleting_an_agent_deletes_its_own_archive_with_its_memories_but_keeps_a_shared_one(
    alice_api: APIClient, agent: Agent
) -> None:
    passage_insert(agent=agent, text="Alice drinks green tea")
    own = AgentArchive.objects.get(agent=agent, is_owner=True).archive
    shared = create(alice_api, "team notes")
    assert alice_api.patch(f"/v1/agents/{agent.public_id}/archives/attach/{shared['id']}").status_code == 200

    assert alice_api.delete(f"/v1/agents/{agent.public_id}").status_code == 200

    assert not Archive.objects.filter(pk=own.pk).exists()
    assert not Passage.objects.filter(archive=own).exists()
    assert alice_api.get(f"/v1/archives/{shared['id']}").status_code == 200
    listed = [archive["id"] for archive in alice_api.get("/v1/archives/").json()]
    assert listed == [shared["id"]]


def test_an_own_archive_still_holding_passages_added_over_the_api_or_attached_elsewhere_stays(
    alice_api: APIClient, cast: Cast, agent: Agent
) -> None:
    passage_insert(agent=agent, text="Alice drinks green tea")
    own = AgentArchive.objects.get(agent=agent, is_owner=True).archive
    other = AgentFactory(organization=cast.org_a, name="reader", embedding="demo/hashed-256")
    assert alice_api.patch(f"/v1/agents/{other.public_id}/archives/attach/{own.public_id}").status_code == 200
    add(alice_api, {"id": own.public_id}, "kept by the team")

    assert alice_api.delete(f"/v1/agents/{agent.public_id}").status_code == 200

    kept = Archive.objects.get(pk=own.pk)
    assert [passage.text for passage in kept.passages.all()] == ["kept by the team"]
