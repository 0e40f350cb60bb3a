"""Agents that name the web built-ins: created through the API and the 0.1.324 SDK, Letta's 400 for an
unknown name, and real turns in which the model calls ``fetch_webpage`` and ``web_search``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from letta_client import Letta
from letta_client.core.api_error import ApiError

from agents.models import Agent
from tests.fake_llm import Reply
from tests.support.live_server import letta_server  # noqa: F401
from tests.tools.web_fakes import ARTICLE, exa_route, fake_web
from tools.models import Tool, ToolKind

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.fake_llm import FakeLLMServer
    from tests.support.live_server import LiveServer

# What Letta Code 0.32 sends to create its default agent (LETTA_CONVERSATIONS.md §4), trimmed to the
# fields this test is about.
LETTA_CODE_AGENT = {
    "agent_type": "letta_v1_agent",
    "name": "Letta Code",
    "description": "A coding agent",
    "tags": ["origin:letta-code"],
    "tools": ["web_search", "fetch_webpage"],
    "include_base_tools": False,
    "include_base_tool_rules": False,
}
CLAUDE = "anthropic/claude-sonnet-4-5-20250929"
OWN_WEB_SEARCH = '''
def web_search(query: str) -> str:
    """Search our wiki.

    Args:
        query: What to look for.
    """
    return query
'''


def create(api: APIClient, **fields: Any) -> Any:
    return api.post("/v1/agents/", {**LETTA_CODE_AGENT, "model": "demo/echo-1", **fields}, format="json")


@pytest.mark.django_db
def test_an_agent_is_created_with_the_web_tools_by_name_on_a_fresh_organization(
    alice_api: APIClient, cast: Cast
) -> None:
    assert not Tool.objects.for_org(cast.org_a).exists()

    first = create(alice_api)
    second = create(alice_api, name="Letta Code 2")

    assert first.status_code == second.status_code == 200, first.content
    assert [tool["name"] for tool in first.json()["tools"]] == ["web_search", "fetch_webpage"]
    assert {tool["tool_type"] for tool in first.json()["tools"]} == {"letta_builtin"}
    rows = Tool.objects.for_org(cast.org_a)
    assert sorted(rows.values_list("name", "kind")) == [
        ("fetch_webpage", ToolKind.BUILTIN),
        ("web_search", ToolKind.BUILTIN),
    ]
    assert [tool["id"] for tool in second.json()["tools"]] == [tool["id"] for tool in first.json()["tools"]]


@pytest.mark.django_db
def test_an_unknown_tool_name_answers_lettas_400_text_and_creates_nothing(alice_api: APIClient, cast: Cast) -> None:
    one = create(alice_api, tools=["web_search", "no_such_tool"])
    two = create(alice_api, tools=["zeta_tool", "fetch_webpage", "alpha_tool", "zeta_tool"])

    assert one.status_code == two.status_code == 400
    assert one.json() == {"detail": "Tools not found by name: {'no_such_tool'}"}
    assert two.json() == {"detail": "Tools not found by name: {'alpha_tool', 'zeta_tool'}"}
    assert not Agent.objects.exists()


@pytest.mark.django_db
def test_an_organizations_own_tool_of_that_name_is_the_one_attached(alice_api: APIClient, cast: Cast) -> None:
    own = alice_api.post("/v1/tools/", {"source_code": OWN_WEB_SEARCH}, format="json").json()

    response = create(alice_api, tools=["web_search"])

    assert [tool["id"] for tool in response.json()["tools"]] == [own["id"]]


@pytest.mark.live_server
@pytest.mark.sdk
def test_the_sdk_creates_an_agent_with_the_web_tools_and_reads_lettas_errors(letta_server: LiveServer) -> None:  # noqa: F811
    client = Letta(base_url=letta_server.url, token=letta_server.api_key)

    agent = client.agents.create(
        name="Letta Code",
        model="demo/echo-1",
        tools=["web_search", "fetch_webpage"],
        include_base_tools=False,
        tags=["origin:letta-code"],
    )
    with pytest.raises(ApiError) as unknown:
        client.agents.create(name="x", model="demo/echo-1", tools=["web_search", "no_such_tool"])
    with pytest.raises(ApiError) as missing_route:
        client.groups.count()

    assert sorted(tool.name for tool in agent.tools) == ["fetch_webpage", "web_search"]
    assert (unknown.value.status_code, unknown.value.body) == (
        400,
        {"detail": "Tools not found by name: {'no_such_tool'}"},
    )
    assert (missing_route.value.status_code, missing_route.value.body) == (404, {"detail": "Not Found"})
    assert client.agents.count() >= 1
    assert client.tools.count() >= 2
    assert client.health.check().version == "0.16.8"
    client.agents.delete(agent_id=agent.id)


# --- real turns: the model calls the tool, the server runs it, the model reads the result ---------------


@pytest.fixture
def claude_on_the_fake(settings: Any, fake_llm: FakeLLMServer) -> None:
    """The server's Anthropic provider is the fake model."""
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"


def _turn(api: APIClient, agent_id: str, text: str) -> list[dict[str, Any]]:
    response = api.post(
        f"/v1/agents/{agent_id}/messages", {"messages": [{"role": "user", "content": text}]}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["messages"]


def _tool_result_sent_back(fake_llm: FakeLLMServer) -> str:
    """The tool_result block of the last Anthropic request: what the model read."""
    last = fake_llm.requests[-1].body["messages"][-1]
    [block] = [block for block in last["content"] if block.get("type") == "tool_result"]
    return json.dumps(block["content"])


@pytest.mark.django_db
@pytest.mark.usefixtures("claude_on_the_fake")
def test_a_turn_in_which_the_model_fetches_a_page(alice_api: APIClient, settings: Any, fake_llm: FakeLLMServer) -> None:
    settings.WEB_FETCH_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    with fake_web() as web:
        url = web.page("/tides", ARTICLE)
        agent = create(alice_api, model=CLAUDE, tools=["fetch_webpage"]).json()
        fake_llm.script(Reply(tool_calls=[("fetch_webpage", {"url": url})]), Reply(text="Two high tides a day."))

        messages = _turn(alice_api, agent["id"], f"How do tides work? Read {url}")

    offered = {tool["name"]: tool for tool in fake_llm.requests[0].body["tools"]}
    assert offered["fetch_webpage"]["input_schema"]["required"] == ["url"]
    [result] = [m for m in messages if m["message_type"] == "tool_return_message"]
    assert result["status"] == "success"
    assert result["tool_return"].startswith("# How tides work")
    assert "**two high tides**" in _tool_result_sent_back(fake_llm)
    assert messages[-1]["message_type"] == "assistant_message"
    assert [request.path for request in web.requests] == ["/tides"]


@pytest.mark.django_db
@pytest.mark.usefixtures("claude_on_the_fake")
def test_a_turn_in_which_the_model_searches_with_the_agents_own_exa_key(
    alice_api: APIClient, settings: Any, fake_llm: FakeLLMServer
) -> None:
    settings.WEB_SEARCH_PROVIDER = "auto"
    settings.EXA_API_KEY = ""
    settings.TAVILY_API_KEY = ""
    settings.SEARXNG_URL = ""
    with fake_web() as exa:
        settings.EXA_BASE_URL = exa.url("")
        exa.routes["/search"] = exa_route(
            "exa-agent-key",
            [
                {
                    "title": "Tides",
                    "url": "https://example.org/tides",
                    "publishedDate": None,
                    "author": "Ann",
                    "highlights": ["Two a day."],
                }
            ],
        )
        agent = create(alice_api, model=CLAUDE, tools=["web_search"], secrets={"EXA_API_KEY": "exa-agent-key"}).json()
        fake_llm.script(
            Reply(tool_calls=[("web_search", {"query": "tides", "num_results": 3})]), Reply(text="Found it.")
        )

        messages = _turn(alice_api, agent["id"], "Search the web for tides.")

    [result] = [m for m in messages if m["message_type"] == "tool_return_message"]
    assert result["status"] == "success"
    assert json.loads(result["tool_return"]) == {
        "query": "tides",
        "results": [
            {
                "title": "Tides",
                "url": "https://example.org/tides",
                "published_date": None,
                "author": "Ann",
                "highlights": ["Two a day."],
            }
        ],
    }
    assert exa.requests[0].headers["x-api-key"] == "exa-agent-key"
    assert "https://example.org/tides" in _tool_result_sent_back(fake_llm)


@pytest.mark.django_db
@pytest.mark.usefixtures("claude_on_the_fake")
def test_a_turn_without_a_search_provider_shows_the_model_a_clear_error(
    alice_api: APIClient, settings: Any, fake_llm: FakeLLMServer
) -> None:
    settings.EXA_API_KEY = settings.TAVILY_API_KEY = settings.SEARXNG_URL = ""
    agent = create(alice_api, model=CLAUDE).json()
    fake_llm.script(Reply(tool_calls=[("web_search", {"query": "tides"})]), Reply(text="Search is off."))

    messages = _turn(alice_api, agent["id"], "Search the web for tides.")

    [result] = [m for m in messages if m["message_type"] == "tool_return_message"]
    assert result["status"] == "error"
    assert result["tool_return"].startswith("web search is not configured on this server: set EXA_API_KEY")
    assert "web search is not configured on this server" in _tool_result_sent_back(fake_llm)
