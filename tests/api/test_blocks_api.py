"""Core memory blocks over ``/v1``: an agent's blocks by label, attach/detach, and ``/v1/blocks``."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.memory import services as memory_services
from agents.models import Agent, AgentBlock, Block
from tests.conftest import Cast
from tests.factories import keeper_agent

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(cast: Cast) -> Agent:
    return keeper_agent(cast.org_a, persona_limit=100)


def test_an_agent_created_without_blocks_gets_the_default_human_and_persona(alice_api: APIClient) -> None:
    state = alice_api.post("/v1/agents/", {"name": "plain", "model": "demo/echo-1"}, format="json").json()

    assert [block["label"] for block in state["blocks"]] == ["human", "persona"]
    assert state["memory"]["blocks"] == state["blocks"]
    assert state["memory"]["agent_type"] == "letta_v1_agent"
    human = state["blocks"][0]
    assert human["id"].startswith("block-")
    assert human["limit"] == 20000
    assert human["description"].startswith("The human block")
    assert human["read_only"] is False


def test_an_agent_is_created_with_inline_blocks_and_existing_block_ids(alice_api: APIClient, cast: Cast) -> None:
    shared = memory_services.block_create(organization=cast.org_a, label="team", value="We ship on Fridays.")

    state = alice_api.post(
        "/v1/agents/",
        {
            "name": "member",
            "model": "demo/echo-1",
            "memory_blocks": [{"label": "human", "value": "Bob", "limit": 50, "description": "who"}],
            "block_ids": [shared.public_id],
        },
        format="json",
    ).json()

    assert [(b["label"], b["value"], b["limit"]) for b in state["blocks"]] == [
        ("human", "Bob", 50),
        ("team", "We ship on Fridays.", 20000),
    ]
    assert state["blocks"][1]["id"] == shared.public_id


def test_creating_an_agent_with_another_orgs_block_id_is_a_404_and_creates_nothing(
    alice_api: APIClient, cast: Cast
) -> None:
    foreign = memory_services.block_create(organization=cast.org_b, label="secret", value="globex plans")

    response = alice_api.post(
        "/v1/agents/", {"name": "thief", "model": "demo/echo-1", "block_ids": [foreign.public_id]}, format="json"
    )

    assert response.status_code == 404
    assert "globex plans" not in response.content.decode()
    assert not Agent.objects.filter(name="thief").exists()


def test_a_value_longer_than_its_limit_is_a_422_on_create(alice_api: APIClient) -> None:
    response = alice_api.post(
        "/v1/agents/",
        {"name": "x", "model": "demo/echo-1", "memory_blocks": [{"label": "human", "value": "x" * 11, "limit": 10}]},
        format="json",
    )

    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == "Edit failed: Exceeds 10 character limit (requested 11)"


def test_the_agents_blocks_are_listed_retrieved_and_modified_by_label(alice_api: APIClient, agent: Agent) -> None:
    base = f"/v1/agents/{agent.public_id}/core-memory/blocks"

    listed = alice_api.get(base).json()
    human = alice_api.get(f"{base}/human").json()
    patched = alice_api.patch(f"{base}/human", {"value": "Name: Alice Liddell"}, format="json")

    assert [b["label"] for b in listed] == ["human", "persona"]
    assert human["value"] == "Name: Alice"
    assert patched.status_code == 200
    assert patched.json()["value"] == "Name: Alice Liddell"
    assert Block.objects.get(label="human", agent_blocks__agent=agent).value == "Name: Alice Liddell"


def test_an_unknown_label_is_a_404_for_retrieve_and_modify_and_changes_nothing(
    alice_api: APIClient, agent: Agent
) -> None:
    base = f"/v1/agents/{agent.public_id}/core-memory/blocks"
    values = sorted(Block.objects.values_list("value", flat=True))

    got = alice_api.get(f"{base}/nope")
    patched = alice_api.patch(f"{base}/nope", {"value": "overwritten"}, format="json")

    assert got.status_code == patched.status_code == 404
    assert got.json() == {"detail": f"No block with label 'nope' found for agent '{agent.public_id}'"}
    assert sorted(Block.objects.values_list("value", flat=True)) == values


def test_modifying_past_the_limit_is_a_400_naming_both_lengths(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.patch(
        f"/v1/agents/{agent.public_id}/core-memory/blocks/persona", {"value": "y" * 101}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {"detail": "Edit failed: Exceeds 100 character limit (requested 101)"}
    assert Block.objects.get(label="persona").value == "A careful archivist."


def test_the_api_may_edit_a_read_only_block(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.patch(
        f"/v1/agents/{agent.public_id}/core-memory/blocks/persona", {"value": "Curator."}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["read_only"] is True


def test_a_block_is_attached_to_two_agents_and_detached_from_one(
    alice_api: APIClient, cast: Cast, agent: Agent
) -> None:
    other = services.agent_create(organization=cast.org_a, name="second", memory_blocks=[])
    shared = alice_api.post("/v1/blocks/", {"label": "team", "value": "shared notes"}, format="json").json()

    first = alice_api.patch(f"/v1/agents/{agent.public_id}/core-memory/blocks/attach/{shared['id']}", {}, format="json")
    second = alice_api.patch(f"/v1/agents/{other.public_id}/core-memory/blocks/attach/{shared['id']}", format="json")
    users = alice_api.get(f"/v1/blocks/{shared['id']}/agents").json()
    detached = alice_api.patch(f"/v1/agents/{agent.public_id}/core-memory/blocks/detach/{shared['id']}")

    assert [b["label"] for b in first.json()["blocks"]] == ["human", "persona", "team"]
    assert [b["label"] for b in second.json()["blocks"]] == ["team"]
    assert sorted(a["id"] for a in users) == sorted([agent.public_id, other.public_id])
    assert [b["label"] for b in detached.json()["blocks"]] == ["human", "persona"]
    assert Block.objects.filter(label="team").exists()


def test_attaching_a_block_whose_label_the_agent_already_has_is_a_409(
    alice_api: APIClient, cast: Cast, agent: Agent
) -> None:
    clash = memory_services.block_create(organization=cast.org_a, label="human", value="someone else")

    response = alice_api.patch(f"/v1/agents/{agent.public_id}/core-memory/blocks/attach/{clash.public_id}")

    assert response.status_code == 409
    assert AgentBlock.objects.filter(agent=agent).count() == 2


def test_an_edit_through_one_agent_is_seen_by_every_agent_sharing_the_block(alice_api: APIClient, cast: Cast) -> None:
    shared = memory_services.block_create(organization=cast.org_a, label="team", value="v1")
    one = services.agent_create(organization=cast.org_a, name="one", block_ids=[shared.public_id])
    two = services.agent_create(organization=cast.org_a, name="two", block_ids=[shared.public_id])

    alice_api.patch(f"/v1/agents/{one.public_id}/core-memory/blocks/team", {"value": "v2"}, format="json")

    assert alice_api.get(f"/v1/agents/{two.public_id}").json()["blocks"][0]["value"] == "v2"


def test_the_organizations_blocks_are_created_listed_filtered_retrieved_modified_and_deleted(
    alice_api: APIClient, cast: Cast
) -> None:
    made = [
        alice_api.post("/v1/blocks/", body, format="json").json()
        for body in (
            {"label": "notes", "value": "apples and pears", "tags": ["fruit"]},
            {"label": "notes", "value": "carrots"},
            {"label": "plan", "value": "ship apples", "description": "the plan", "metadata": {"k": 1}},
        )
    ]
    memory_services.block_create(organization=cast.org_b, label="notes", value="apples of globex")

    everything = alice_api.get("/v1/blocks/").json()
    by_label = alice_api.get("/v1/blocks/?label=notes").json()
    by_value = alice_api.get("/v1/blocks/?value_search=apples").json()
    by_tag = alice_api.get("/v1/blocks/?tags=fruit").json()
    page = alice_api.get(f"/v1/blocks/?after={made[0]['id']}&limit=1").json()
    count = alice_api.get("/v1/blocks/count").json()
    modified = alice_api.patch(f"/v1/blocks/{made[2]['id']}", {"value": "ship pears", "read_only": True}, format="json")
    deleted = alice_api.delete(f"/v1/blocks/{made[1]['id']}")

    assert [b["id"] for b in everything] == [b["id"] for b in made]
    assert [b["value"] for b in by_label] == ["apples and pears", "carrots"]
    assert [b["value"] for b in by_value] == ["apples and pears", "ship apples"]
    assert [b["id"] for b in by_tag] == [made[0]["id"]]
    assert [b["id"] for b in page] == [made[1]["id"]]
    assert count == 3
    assert (modified.json()["value"], modified.json()["read_only"], modified.json()["metadata"]) == (
        "ship pears",
        True,
        {"k": 1},
    )
    assert deleted.status_code == 200
    assert alice_api.get(f"/v1/blocks/{made[1]['id']}").status_code == 404


def test_deleting_a_block_removes_it_from_its_agents(alice_api: APIClient, agent: Agent) -> None:
    human = Block.objects.get(label="human", agent_blocks__agent=agent)

    alice_api.delete(f"/v1/blocks/{human.public_id}")

    assert [b["label"] for b in alice_api.get(f"/v1/agents/{agent.public_id}").json()["blocks"]] == ["persona"]


def test_core_memory_answers_the_agents_memory(alice_api: APIClient, agent: Agent) -> None:
    memory = alice_api.get(f"/v1/agents/{agent.public_id}/core-memory").json()

    assert [b["label"] for b in memory["blocks"]] == ["human", "persona"]


def test_the_agent_list_renders_blocks_in_a_constant_number_of_queries(
    alice_api: APIClient, cast: Cast, django_assert_max_num_queries
) -> None:
    for index in range(2):
        services.agent_create(organization=cast.org_a, name=f"a{index}")
    alice_api.get("/v1/agents/")
    with django_assert_max_num_queries(20) as two:
        alice_api.get("/v1/agents/")
    for index in range(5):
        services.agent_create(organization=cast.org_a, name=f"b{index}")
    with django_assert_max_num_queries(len(two.captured_queries)):
        response = alice_api.get("/v1/agents/")

    assert all(len(state["blocks"]) == 2 for state in response.json())
