"""web_search through DefaultToolRunner, against fake Exa, Tavily and SearXNG servers on 127.0.0.1."""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import async_to_sync

from tests.tools.web_fakes import FakeWeb, exa_route, fake_web, searxng_route, tavily_route
from tools.base import ToolContext, ToolSpec
from tools.builtins import default_registry
from tools.builtins.web.search import CATEGORIES
from tools.runtime import DefaultToolRunner

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tools.base import ToolOutcome

EXA_RESULTS = [
    {
        "id": "https://arxiv.org/abs/2501.00001",
        "title": "Tides and the Moon",
        "url": "https://arxiv.org/abs/2501.00001",
        "publishedDate": "2025-01-02T00:00:00.000Z",
        "author": "Ann Lee",
        "score": 0.41,
        "text": "The full text of the paper.",
        "highlights": ["The Moon pulls the oceans.", "Two tides a day."],
        "highlightScores": [0.61, 0.52],
        "summary": "A paper about tides.",
    },
    {
        "id": "https://example.org/tides",
        "title": "Tide tables",
        "url": "https://example.org/tides",
        "publishedDate": None,
        "author": "",
        "score": 0.33,
        "highlights": [],
        "summary": "",
    },
]
TAVILY_RESULTS = [
    {
        "title": "Tides explained",
        "url": "https://oceans.example.com/tides",
        "content": "Tides are caused by the Moon.",
        "score": 0.81,
        "raw_content": "# Tides explained\n\nTides are caused by the Moon.",
    }
]
SEARXNG_RESULTS = [
    {
        "url": "https://en.wikipedia.org/wiki/Tide",
        "title": "Tide - Wikipedia",
        "content": "Tides are the rise and fall of sea levels.",
        "engine": "wikipedia",
        "publishedDate": None,
        "category": "general",
        "score": 3.0,
    },
    {
        "url": "https://news.example.net/king-tides",
        "title": "King tides flood the coast",
        "content": "Record tides this week.",
        "engine": "bing news",
        "publishedDate": "2026-02-01T08:00:00",
        "author": "Sam Reporter",
        "category": "news",
        "score": 1.0,
    },
    {"url": "https://spam.example.com/", "title": "Spam", "content": "", "engine": "x", "score": 0.1},
]


@pytest.fixture
def web() -> Iterator[FakeWeb]:
    with fake_web() as server:
        yield server


@pytest.fixture(autouse=True)
def unconfigured(settings) -> None:
    settings.WEB_SEARCH_PROVIDER = "auto"
    settings.EXA_API_KEY = ""
    settings.TAVILY_API_KEY = ""
    settings.SEARXNG_URL = ""


def search(arguments: dict[str, Any], env_vars: dict[str, str] | None = None) -> ToolOutcome:
    builtin = default_registry().get("web_search")
    assert builtin is not None
    spec = ToolSpec(name="web_search", kind="builtin", json_schema=builtin.json_schema)
    context = ToolContext(organization_id=uuid.uuid4(), agent_id=uuid.uuid4(), env_vars=env_vars or {})
    return async_to_sync(DefaultToolRunner().run)(spec, json.dumps(arguments), context)


def answer(outcome: ToolOutcome) -> dict[str, Any]:
    assert outcome.status == "success", outcome.tool_return
    return json.loads(outcome.tool_return)


def test_it_has_lettas_parameters():
    builtin = default_registry().get("web_search")

    assert builtin is not None and builtin.available and builtin.tool_type == "letta_builtin"
    schema = builtin.json_schema["parameters"]
    assert schema["required"] == ["query"]
    assert {name: spec["type"] for name, spec in schema["properties"].items()} == {
        "query": "string",
        "num_results": "integer",
        "category": "string",
        "include_text": "boolean",
        "include_domains": "array",
        "exclude_domains": "array",
        "start_published_date": "string",
        "end_published_date": "string",
        "user_location": "string",
    }
    assert schema["properties"]["category"]["enum"] == CATEGORIES
    assert 'web_search("Letta API documentation core_memory_append", num_results=3)' in builtin.description


def exa_answers(web, settings, key: str, results: list, *, server_key: str | None = None) -> None:
    """The server's Exa is the fake at ``web``, answering ``results`` to ``key``; the server's own key is
    ``server_key`` (``key`` when not said)."""
    settings.EXA_API_KEY = key if server_key is None else server_key
    settings.EXA_BASE_URL = web.url("")
    web.routes["/search"] = exa_route(key, results)


# --- Exa ------------------------------------------------------------------------------------------


def test_exa_is_asked_as_letta_asks_it_and_answered_in_lettas_shape(web, settings):
    exa_answers(web, settings, "exa-server-key", EXA_RESULTS)

    outcome = search(
        {
            "query": "how tides work",
            "num_results": 2,
            "category": "research paper",
            "include_text": True,
            "include_domains": ["arxiv.org"],
            "start_published_date": "2024-01-01",
            "user_location": "US",
        }
    )

    [request] = web.requests
    assert (request.method, request.path, request.headers["x-api-key"]) == ("POST", "/search", "exa-server-key")
    assert request.json() == {
        "query": "how tides work",
        "numResults": 2,
        "type": "auto",
        "contents": {
            "highlights": {"numSentences": 2, "highlightsPerUrl": 3, "query": "how tides work"},
            "summary": {"query": "Summarize the key information from this content related to: how tides work"},
            "text": True,
        },
        "category": "research paper",
        "includeDomains": ["arxiv.org"],
        "startPublishedDate": "2024-01-01",
        "userLocation": "US",
    }
    expected = {
        "query": "how tides work",
        "results": [
            {
                "title": "Tides and the Moon",
                "url": "https://arxiv.org/abs/2501.00001",
                "published_date": "2025-01-02T00:00:00.000Z",
                "author": "Ann Lee",
                "text": "The full text of the paper.",
                "highlights": ["The Moon pulls the oceans.", "Two tides a day."],
                "summary": "A paper about tides.",
            },
            {"title": "Tide tables", "url": "https://example.org/tides", "published_date": None, "author": ""},
        ],
    }
    assert outcome.tool_return == json.dumps(expected, indent=2, ensure_ascii=False)


def test_without_include_text_no_page_text_is_asked_for_or_shown(web, settings):
    exa_answers(web, settings, "k", EXA_RESULTS)

    result = answer(search({"query": "tides"}))

    assert "text" not in web.requests[0].json()["contents"]
    assert "text" not in result["results"][0]
    assert web.requests[0].json()["numResults"] == 10


@pytest.mark.parametrize(("asked", "sent"), [(0, 1), (-3, 1), (500, 100)])
def test_num_results_is_clamped_to_1_to_100_as_letta_does(web, settings, asked, sent):
    exa_answers(web, settings, "k", [])

    answer(search({"query": "tides", "num_results": asked}))

    assert web.requests[0].json()["numResults"] == sent


def test_the_agents_own_key_overrides_the_servers(web, settings):
    exa_answers(web, settings, "exa-agent-key", EXA_RESULTS, server_key="exa-server-key")

    result = answer(search({"query": "tides"}, env_vars={"EXA_API_KEY": "exa-agent-key"}))

    assert web.requests[0].headers["x-api-key"] == "exa-agent-key"
    assert [item["title"] for item in result["results"]] == ["Tides and the Moon", "Tide tables"]


def test_an_agents_key_alone_configures_its_provider(web, settings):
    settings.TAVILY_BASE_URL = web.url("")
    web.routes["/search"] = tavily_route("tvly-agent", TAVILY_RESULTS)

    result = answer(search({"query": "tides"}, env_vars={"TAVILY_API_KEY": "tvly-agent"}))

    assert result["results"][0]["url"] == "https://oceans.example.com/tides"


# --- Tavily ---------------------------------------------------------------------------------------


def test_tavily_is_asked_on_its_wire_and_answered_in_lettas_shape(web, settings):
    settings.WEB_SEARCH_PROVIDER = "tavily"
    settings.EXA_API_KEY = "an-exa-key-that-is-not-chosen"
    settings.TAVILY_API_KEY = "tvly-server"
    settings.TAVILY_BASE_URL = web.url("")
    web.routes["/search"] = tavily_route("tvly-server", TAVILY_RESULTS)

    outcome = search(
        {
            "query": "tide news",
            "num_results": 50,
            "category": "news",
            "include_text": True,
            "exclude_domains": ["https://www.spam.example.com/"],
            "start_published_date": "2026-01-01T00:00:00Z",
            "end_published_date": "2026-02-01",
        }
    )

    [request] = web.requests
    assert (request.path, request.headers["authorization"]) == ("/search", "Bearer tvly-server")
    assert request.json() == {
        "query": "tide news",
        "max_results": 20,
        "topic": "news",
        "search_depth": "basic",
        "include_answer": False,
        "include_raw_content": "markdown",
        "exclude_domains": ["spam.example.com"],
        "start_date": "2026-01-01",
        "end_date": "2026-02-01",
    }
    assert answer(outcome) == {
        "query": "tide news",
        "results": [
            {
                "title": "Tides explained",
                "url": "https://oceans.example.com/tides",
                "published_date": None,
                "author": None,
                "text": "# Tides explained\n\nTides are caused by the Moon.",
                "highlights": ["Tides are caused by the Moon."],
            }
        ],
    }


# --- SearXNG --------------------------------------------------------------------------------------


def test_searxng_is_asked_for_json_and_its_results_are_filtered_and_cut(web, settings):
    settings.SEARXNG_URL = web.url("/")
    web.routes["/search"] = searxng_route(SEARXNG_RESULTS)

    result = answer(
        search({"query": "king tides", "num_results": 1, "category": "news", "exclude_domains": ["wikipedia.org"]})
    )

    [request] = web.requests
    assert (request.method, request.path) == ("GET", "/search")
    assert request.query == {"q": ["king tides"], "format": ["json"], "categories": ["news"], "pageno": ["1"]}
    assert result == {
        "query": "king tides",
        "results": [
            {
                "title": "King tides flood the coast",
                "url": "https://news.example.net/king-tides",
                "published_date": "2026-02-01T08:00:00",
                "author": "Sam Reporter",
                "highlights": ["Record tides this week."],
            }
        ],
    }


def test_searxng_keeps_only_the_domains_asked_for(web, settings):
    settings.SEARXNG_URL = web.url("")
    web.routes["/search"] = searxng_route(SEARXNG_RESULTS)

    result = answer(search({"query": "tides", "include_domains": ["wikipedia.org"]}))

    assert [item["url"] for item in result["results"]] == ["https://en.wikipedia.org/wiki/Tide"]


def test_auto_takes_the_first_configured_provider(web, settings):
    settings.TAVILY_API_KEY = "tvly"
    settings.TAVILY_BASE_URL = web.url("")
    settings.SEARXNG_URL = "http://127.0.0.1:9/never-asked"
    web.routes["/search"] = tavily_route("tvly", TAVILY_RESULTS)

    answer(search({"query": "tides"}))

    assert web.requests[0].headers["authorization"] == "Bearer tvly"


# --- errors, as Letta answers them -------------------------------------------------------------------


def test_without_a_provider_the_call_is_a_clear_error():
    outcome = search({"query": "tides"})

    assert outcome.status == "error"
    assert outcome.tool_return == (
        "web search is not configured on this server: set EXA_API_KEY, TAVILY_API_KEY or SEARXNG_URL on the "
        "server, or give the agent an EXA_API_KEY or TAVILY_API_KEY tool variable."
    )


def test_a_chosen_provider_without_its_key_is_a_clear_error(settings):
    settings.WEB_SEARCH_PROVIDER = "exa"
    settings.TAVILY_API_KEY = "tvly-not-chosen"

    outcome = search({"query": "tides"})

    assert outcome.status == "error"
    assert outcome.tool_return == (
        "web search is not configured on this server: WEB_SEARCH_PROVIDER is exa, but EXA_API_KEY is set "
        "neither on the server nor as the agent's tool variable."
    )


def test_a_blank_query_is_answered_as_letta_answers_it(web, settings):
    settings.EXA_API_KEY = "k"
    settings.EXA_BASE_URL = web.url("")

    outcome = search({"query": "   "})

    assert (outcome.status, outcome.tool_return) == ("success", '{"error": "Query cannot be empty", "query": "   "}')
    assert web.requests == []


def test_a_refused_key_is_a_failed_search_that_does_not_show_the_key(web, settings):
    exa_answers(web, settings, "exa-right-key", EXA_RESULTS, server_key="exa-wrong-key")

    outcome = search({"query": "tides"})

    assert outcome.status == "success"
    assert json.loads(outcome.tool_return) == {
        "query": "tides",
        "error": "Search failed: Exa answered HTTP 401 (the API key or the instance refused the request)",
    }
    assert "exa-wrong-key" not in outcome.tool_return


def test_a_slow_search_api_is_a_failed_search(web, settings):
    settings.WEB_SEARCH_TIMEOUT_SECONDS = 0.3
    settings.TAVILY_API_KEY = "tvly"
    settings.TAVILY_BASE_URL = web.url("")

    def slow(handler):
        time.sleep(2)
        handler.answer_json(200, {"results": []})

    web.routes["/search"] = slow

    outcome = search({"query": "tides"})

    assert json.loads(outcome.tool_return) == {
        "query": "tides",
        "error": "Search failed: Tavily did not answer within 0.3 s",
    }
    assert outcome.duration_ms < 1500


def test_an_answer_that_is_not_a_search_result_is_a_failed_search(web, settings):
    settings.SEARXNG_URL = web.url("")
    web.page("/search", b"<html>SearXNG without the json format</html>")

    outcome = search({"query": "tides"})

    assert json.loads(outcome.tool_return) == {
        "query": "tides",
        "error": "Search failed: SearXNG answered something that is not a search result",
    }


def test_an_unreachable_search_api_is_a_failed_search(settings):
    settings.SEARXNG_URL = "http://127.0.0.1:9"

    outcome = search({"query": "tides"})

    assert json.loads(outcome.tool_return) == {
        "query": "tides",
        "error": "Search failed: SearXNG could not be reached (ConnectError)",
    }
