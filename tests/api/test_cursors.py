"""Every list route pages as letta-client 1.x iterates: ``after=<last id>`` until an empty page, in ``order``."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.memory.services import block_create
from agents.models import Agent, Run
from tests.factories import AgentFactory, AgentToolFactory, ToolFactory
from tests.tool_sources import DICE_SOURCE
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db


def walk(api: APIClient, path: str, *, limit: int, order: str) -> tuple[list[str], int]:
    """What 1.x's auto-pagination collects: ids in the order received, and how many requests it made."""
    ids: list[str] = []
    requests = 0
    query: dict[str, Any] = {"limit": limit, "order": order}
    while True:
        page = api.get(path, query).json()
        requests += 1
        assert isinstance(page, list)
        if not page:
            return ids, requests
        ids += list(dict.fromkeys(item["id"] for item in page))
        query["after"] = page[-1]["id"]


def all_ids(api: APIClient, path: str, order: str) -> list[str]:
    return list(dict.fromkeys(item["id"] for item in api.get(path, {"order": order, "limit": 1000}).json()))


@pytest.fixture
def agent(cast) -> Agent:
    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE)
    return AgentFactory(organization=cast.org_a, name="pager", tool_ids=[dice.public_id])


@pytest.fixture
def rows(cast, agent: Agent, alice_api: APIClient) -> dict[str, str]:
    """Several rows behind every list route; the path of each."""
    for index in range(4):
        services.agent_create(organization=cast.org_a, name=f"extra-{index}", model="demo/echo-1")
        AgentToolFactory(agent=agent, tool=ToolFactory(organization=cast.org_a))
        block_create(organization=cast.org_a, label=f"block-{index}", value="v")
    for _ in range(3):
        alice_api.post(
            f"/v1/agents/{agent.public_id}/messages",
            {"messages": [{"role": "user", "content": "call roll_dice with num_sides=6"}]},
            format="json",
        )
    run = Run.objects.filter(agent=agent).order_by("created_at").first()
    assert run is not None
    return {
        "agents": "/v1/agents/",
        "tools": "/v1/tools/",
        "agent-tools": f"/v1/agents/{agent.public_id}/tools",
        "runs": "/v1/runs/",
        "run-messages": f"/v1/runs/{run.public_id}/messages",
        "run-steps": f"/v1/runs/{run.public_id}/steps",
        "steps": "/v1/steps/",
        "blocks": "/v1/blocks/",
        "agent-blocks": f"/v1/agents/{agent.public_id}/core-memory/blocks",
    }


ROUTES = ["agents", "tools", "agent-tools", "runs", "run-messages", "run-steps", "steps", "blocks", "agent-blocks"]


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("route", ROUTES)
def test_iterating_with_after_yields_every_row_once_in_order_then_an_empty_page(alice_api, rows, route, order):
    path = rows[route]
    expected = all_ids(alice_api, path, order)
    assert len(expected) >= 2

    ids, requests = walk(alice_api, path, limit=1, order=order)

    assert ids == expected
    assert requests == len(expected) + 1


@pytest.mark.parametrize("route", ROUTES)
def test_asc_and_desc_are_each_others_reverse_and_before_is_relative_to_order(alice_api, rows, route):
    path = rows[route]
    ascending = all_ids(alice_api, path, "asc")

    assert all_ids(alice_api, path, "desc") == ascending[::-1]
    before_last = alice_api.get(path, {"order": "asc", "before": ascending[-1], "limit": 1000}).json()
    assert list(dict.fromkeys(item["id"] for item in before_last)) == ascending[:-1]
    assert alice_api.get(path, {"order": "asc", "before": ascending[0]}).json() == []
    assert alice_api.get(path, {"order": "asc", "after": ascending[-1]}).json() == []


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("route", ROUTES)
def test_paging_backwards_with_before_the_first_id_yields_every_earlier_row_once(alice_api, rows, route, order):
    path = rows[route]
    expected = all_ids(alice_api, path, order)
    ids: list[str] = []
    query: dict[str, Any] = {"limit": 1, "order": order, "before": expected[-1]}
    while page := alice_api.get(path, query).json():
        ids = list(dict.fromkeys(item["id"] for item in page)) + ids
        query["before"] = page[0]["id"]

    assert ids == expected[:-1]


@pytest.mark.parametrize("route", ROUTES)
def test_an_unknown_order_or_order_by_is_a_422(alice_api, rows, route):
    path = rows[route]

    assert alice_api.get(path, {"order": "sideways"}).status_code == 422
    assert alice_api.get(path, {"order_by": "colour"}).status_code == 422
    assert alice_api.get(path, {"order_by": "created_at"}).status_code == 200


def test_iterating_seven_agents_two_at_a_time_takes_four_pages_and_the_empty_one_that_ends_it(alice_api, cast):
    for index in range(7):
        services.agent_create(organization=cast.org_a, name=f"seven-{index}", model="demo/echo-1")

    ids, requests = walk(alice_api, "/v1/agents/", limit=2, order="desc")

    assert len(ids) == len(set(ids)) == 7
    assert ids == all_ids(alice_api, "/v1/agents/", "desc")
    assert requests == 5  # four pages, then the empty page that ends 1.x's iteration


def test_runs_filter_by_active_and_statuses(alice_api, rows, agent):
    queued = Run.objects.create(organization=agent.organization, agent=agent, background=True)

    active = alice_api.get("/v1/runs/", {"active": "true"}).json()
    created = alice_api.get("/v1/runs/?statuses=created").json()
    completed = alice_api.get("/v1/runs/?statuses=completed&statuses=failed").json()

    assert [r["id"] for r in active] == [queued.public_id]
    assert [r["id"] for r in created] == [queued.public_id]
    assert len(completed) == 3
    assert all(r["status"] == "completed" for r in completed)
