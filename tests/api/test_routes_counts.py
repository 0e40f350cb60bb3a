"""``GET /v1/agents/count``, ``GET /v1/tools/count`` and ``POST /v1/tools/search``, as Letta 0.16.8 answers them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agents import services
from tools.models import Tool
from tools.services import base_tools_upsert, tool_create, tool_upsert_from_source

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

TIDES = '''
def tide_times(port: str) -> str:
    """Look up high and low tide times for a port.

    Args:
        port: The port's name.
    """
    return port
'''


@pytest.fixture
def agents(cast: Cast) -> None:
    services.agent_create(organization=cast.org_a, name="scout", tags=["sea", "night"])
    services.agent_create(organization=cast.org_a, name="scout-2", tags=["sea"])
    services.agent_create(organization=cast.org_a, name="cook", tags=["kitchen"])
    services.agent_create(organization=cast.org_b, name="scout", tags=["sea"])


def test_agents_count_is_a_bare_integer_with_lettas_filters(alice_api: APIClient, agents: None) -> None:
    def count(query: str = "") -> object:
        response = alice_api.get(f"/v1/agents/count{query}")
        assert response.status_code == 200
        return response.json()

    assert count() == 3
    assert alice_api.get("/v1/agents/count/").json() == 3
    assert count("?name=scout") == 1
    assert count("?query_text=scout") == 2
    assert count("?tags=sea") == 2
    assert count("?tags=sea&tags=kitchen") == 3
    assert count("?tags=sea&tags=night&match_all_tags=true") == 1


def test_agents_count_counts_only_the_callers_organization(charlie_api: APIClient, agents: None) -> None:
    assert charlie_api.get("/v1/agents/count").json() == 1
    assert charlie_api.get("/v1/agents/count?query_text=scout").json() == 1


def test_tools_count_is_a_bare_integer_with_lettas_filters(alice_api: APIClient, cast: Cast) -> None:
    builtins = base_tools_upsert(organization=cast.org_a)
    tides = tool_upsert_from_source(organization=cast.org_a, source_code=TIDES)
    tool_create(organization=cast.org_a, kind="client", name="Bash", description="Run a shell command.")
    tool_upsert_from_source(organization=cast.org_b, source_code=TIDES)

    def count(query: str = "") -> object:
        response = alice_api.get(f"/v1/tools/count{query}")
        assert response.status_code == 200
        return response.json()

    total = len(builtins) + 2
    assert count() == total == Tool.objects.for_org(cast.org_a).count()
    assert count("?return_only_letta_tools=true") == len(builtins)
    assert count("?exclude_letta_tools=true") == 2
    assert count("?name=tide_times") == 1
    assert count("?names=tide_times&names=web_search") == 2
    assert count(f"?tool_ids={tides.public_id}") == 1
    assert count("?search=memory") == len([tool for tool in builtins if "memory" in tool.name])
    assert count("?tool_types=letta_builtin") == len([tool for tool in builtins if tool.tool_type == "letta_builtin"])
    assert count("?exclude_tool_types=custom") == len(builtins)


def test_tools_search_ranks_by_the_querys_words_in_lettas_shape(alice_api: APIClient, cast: Cast) -> None:
    base_tools_upsert(organization=cast.org_a)
    tides = tool_upsert_from_source(organization=cast.org_a, source_code=TIDES, tags=["sea"])

    response = alice_api.post("/v1/tools/search", {"query": "web search", "limit": 3}, format="json")

    assert response.status_code == 200
    results = response.json()
    assert len(results) <= 3
    first = results[0]
    assert set(first) == {"tool", "embedded_text", "fts_rank", "vector_rank", "combined_score"}
    assert first["tool"]["name"] == "web_search"
    assert (first["embedded_text"], first["fts_rank"], first["vector_rank"]) == (None, 1, None)
    assert first["combined_score"] == pytest.approx(1 / 61)
    assert [result["fts_rank"] for result in results] == list(range(1, len(results) + 1))
    scores = [result["combined_score"] for result in results]
    assert scores == sorted(scores, reverse=True)

    by_tag = alice_api.post("/v1/tools/search", {"query": "tide", "tags": ["sea"]}, format="json").json()
    assert [result["tool"]["id"] for result in by_tag] == [tides.public_id]
    hybrid = alice_api.post("/v1/tools/search", {"query": "tide", "search_mode": "fts"}, format="json").json()
    assert [result["tool"]["name"] for result in hybrid] == ["tide_times"]


def test_tools_search_without_a_query_lists_what_the_filters_keep(alice_api: APIClient, cast: Cast) -> None:
    builtins = base_tools_upsert(organization=cast.org_a)
    tool_upsert_from_source(organization=cast.org_a, source_code=TIDES)

    everything = alice_api.post("/v1/tools/search", {}, format="json").json()
    builtin = alice_api.post("/v1/tools/search", {"tool_types": ["letta_builtin"], "limit": 100}, format="json").json()

    assert len(everything) == len(builtins) + 1
    assert {result["fts_rank"] for result in everything} == {None}
    assert {result["tool"]["tool_type"] for result in builtin} == {"letta_builtin"}


def test_tools_search_refuses_vector_mode_and_bad_limits(alice_api: APIClient) -> None:
    vector = alice_api.post("/v1/tools/search", {"query": "x", "search_mode": "vector"}, format="json")
    too_many = alice_api.post("/v1/tools/search", {"query": "x", "limit": 101}, format="json")
    unknown_mode = alice_api.post("/v1/tools/search", {"query": "x", "search_mode": "fuzzy"}, format="json")

    assert vector.status_code == 400
    assert vector.json() == {
        "detail": "INVALID_ARGUMENT: Tool vector search needs tool embeddings, which this server does not keep; "
        'use search_mode "fts" or "hybrid".'
    }
    assert too_many.status_code == unknown_mode.status_code == 422
    assert too_many.json()["detail"][0]["loc"] == ["body", "limit"]


def test_tools_search_never_shows_another_organizations_tools(charlie_api: APIClient, cast: Cast) -> None:
    tool_upsert_from_source(organization=cast.org_a, source_code=TIDES)

    assert charlie_api.post("/v1/tools/search", {"query": "tide"}, format="json").json() == []
    assert charlie_api.post("/v1/tools/search", {}, format="json").json() == []
    assert charlie_api.get("/v1/tools/count").json() == 0
