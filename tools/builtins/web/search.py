"""``web_search``: Letta's web search, through the search API the operator configures.


``web_search`` asks the search API the operator configures (``WEB_SEARCH_PROVIDER``: Exa as
Letta, Tavily or a self-hosted SearXNG). An agent's tool variable ``EXA_API_KEY`` or
``TAVILY_API_KEY`` overrides the server's, as on Letta. The answer is Letta's JSON; a
blank query and a failed search are answered the way Letta answers them (as results).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop
from tools.builtins.web.fetch import MARGIN_SECONDS

logger = logging.getLogger(__name__)

CATEGORIES = [
    "company",
    "research paper",
    "news",
    "pdf",
    "github",
    "tweet",
    "personal site",
    "linkedin profile",
    "financial report",
]
PROVIDERS = ("exa", "tavily", "searxng")
KEY_VARIABLES = {"exa": "EXA_API_KEY", "tavily": "TAVILY_API_KEY"}
PROVIDER_NAMES = {"exa": "Exa", "tavily": "Tavily", "searxng": "SearXNG"}
NOT_CONFIGURED = "web search is not configured on this server"
_STRINGS = {"type": "array", "items": {"type": "string"}}


# --- web_search ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchRequest:
    query: str
    num_results: int
    category: str | None
    include_text: bool
    include_domains: tuple[str, ...]
    exclude_domains: tuple[str, ...]
    start_published_date: str | None
    end_published_date: str | None
    user_location: str | None

    @classmethod
    def from_arguments(cls, arguments: dict[str, Any]) -> SearchRequest:
        return cls(
            query=str(arguments["query"]),
            num_results=min(max(int(_given(arguments.get("num_results"), 10)), 1), 100),
            category=arguments.get("category") or None,
            include_text=bool(arguments.get("include_text")),
            include_domains=tuple(_domain(item) for item in arguments.get("include_domains") or ()),
            exclude_domains=tuple(_domain(item) for item in arguments.get("exclude_domains") or ()),
            start_published_date=arguments.get("start_published_date") or None,
            end_published_date=arguments.get("end_published_date") or None,
            user_location=arguments.get("user_location") or None,
        )


@dataclass(frozen=True)
class SearchProvider:
    """The configured search API: its name and credential (a key, or SearXNG's URL)."""

    name: str
    credential: str


class SearchFailed(Exception):
    """The search API failed; the message (no key, no vendor text) becomes Letta's ``Search failed: …``."""


class _Unreadable(ValueError):
    """The search API answered 2xx with something that is not its result JSON."""


def search_provider(env_vars: dict[str, str]) -> SearchProvider:
    """The provider ``WEB_SEARCH_PROVIDER`` picks (``auto``: the first configured); ``ToolError`` if none is."""
    chosen = str(settings.WEB_SEARCH_PROVIDER or "auto")
    if chosen != "auto":
        credential = _credential(chosen, env_vars)
        if credential:
            return SearchProvider(chosen, credential)
        if chosen == "searxng":
            raise ToolError(f"{NOT_CONFIGURED}: WEB_SEARCH_PROVIDER is searxng, but SEARXNG_URL is not set.")
        variable = KEY_VARIABLES[chosen]
        raise ToolError(
            f"{NOT_CONFIGURED}: WEB_SEARCH_PROVIDER is {chosen}, but {variable} is set neither on the server "
            "nor as the agent's tool variable."
        )
    for name in PROVIDERS:
        credential = _credential(name, env_vars)
        if credential:
            return SearchProvider(name, credential)
    raise ToolError(
        f"{NOT_CONFIGURED}: set EXA_API_KEY, TAVILY_API_KEY or SEARXNG_URL on the server, "
        "or give the agent an EXA_API_KEY or TAVILY_API_KEY tool variable."
    )


def _credential(name: str, env_vars: dict[str, str]) -> str:
    if name == "searxng":
        return str(settings.SEARXNG_URL or "")
    variable = KEY_VARIABLES[name]
    return str(env_vars.get(variable) or getattr(settings, variable, "") or "")


async def search(provider: SearchProvider, request: SearchRequest) -> list[dict[str, Any]]:
    """Letta-shaped results from ``provider``; ``SearchFailed`` when the API cannot answer."""
    seconds = float(settings.WEB_SEARCH_TIMEOUT_SECONDS)
    label = PROVIDER_NAMES[provider.name]
    try:
        async with asyncio.timeout(seconds), httpx.AsyncClient(timeout=httpx.Timeout(seconds)) as client:
            if provider.name == "exa":
                return await _exa(client, provider.credential, request)
            if provider.name == "tavily":
                return await _tavily(client, provider.credential, request)
            return await _searxng(client, provider.credential, request)
    except (TimeoutError, httpx.TimeoutException):
        raise SearchFailed(f"{label} did not answer within {seconds:g} s") from None
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        logger.warning("%s search answered %s: %s", label, status, exc.response.text[:2000])
        raise SearchFailed(f"{label} answered HTTP {status}{_meaning(status)}") from None
    except httpx.HTTPError as exc:
        logger.warning("%s search could not be reached: %s", label, exc)
        raise SearchFailed(f"{label} could not be reached ({type(exc).__name__})") from None
    except _Unreadable as exc:
        logger.warning("%s search answered something unreadable: %s", label, exc)
        raise SearchFailed(f"{label} answered something that is not a search result") from None


def _meaning(status: int) -> str:
    if status in {401, 403}:
        return " (the API key or the instance refused the request)"
    if status == 429:
        return " (rate limited or out of credit)"
    if status >= 500:
        return " (the search service failed)"
    return ""


async def _exa(client: httpx.AsyncClient, key: str, request: SearchRequest) -> list[dict[str, Any]]:
    contents: dict[str, Any] = {
        "highlights": {"numSentences": 2, "highlightsPerUrl": 3, "query": request.query},
        "summary": {"query": f"Summarize the key information from this content related to: {request.query}"},
    }
    if request.include_text:
        contents["text"] = True
    body: dict[str, Any] = {
        "query": request.query,
        "numResults": request.num_results,
        "type": "auto",
        "contents": contents,
    }
    optional = {
        "category": request.category,
        "includeDomains": list(request.include_domains),
        "excludeDomains": list(request.exclude_domains),
        "startPublishedDate": request.start_published_date,
        "endPublishedDate": request.end_published_date,
        "userLocation": request.user_location,
    }
    body |= {name: value for name, value in optional.items() if value}
    response = await client.post(
        f"{str(settings.EXA_BASE_URL).rstrip('/')}/search", json=body, headers={"x-api-key": key}
    )
    results = []
    for item in _items(response):
        result = _result(item.get("title"), item.get("url"), item.get("publishedDate"), item.get("author"))
        if request.include_text and item.get("text"):
            result["text"] = item["text"]
        if item.get("highlights"):
            result["highlights"] = list(item["highlights"])
        if item.get("summary"):
            result["summary"] = item["summary"]
        results.append(result)
    return results


async def _tavily(client: httpx.AsyncClient, key: str, request: SearchRequest) -> list[dict[str, Any]]:
    topic = {"news": "news", "financial report": "finance"}.get(request.category or "", "general")
    body: dict[str, Any] = {
        "query": request.query,
        "max_results": min(request.num_results, 20),
        "topic": topic,
        "search_depth": "basic",
        "include_answer": False,
        "include_raw_content": "markdown" if request.include_text else False,
    }
    optional = {
        "include_domains": list(request.include_domains),
        "exclude_domains": list(request.exclude_domains),
        "start_date": (request.start_published_date or "")[:10],
        "end_date": (request.end_published_date or "")[:10],
    }
    body |= {name: value for name, value in optional.items() if value}
    response = await client.post(
        f"{str(settings.TAVILY_BASE_URL).rstrip('/')}/search", json=body, headers={"Authorization": f"Bearer {key}"}
    )
    results = []
    for item in _items(response):
        result = _result(item.get("title"), item.get("url"), item.get("published_date"), None)
        if request.include_text and item.get("raw_content"):
            result["text"] = item["raw_content"]
        if item.get("content"):
            result["highlights"] = [item["content"]]
        results.append(result)
    return results


async def _searxng(client: httpx.AsyncClient, base_url: str, request: SearchRequest) -> list[dict[str, Any]]:
    category = {"news": "news", "research paper": "science", "github": "it"}.get(request.category or "", "general")
    response = await client.get(
        f"{base_url.rstrip('/')}/search",
        params={"q": request.query, "format": "json", "categories": category, "pageno": 1},
    )
    results = []
    for item in _items(response):
        host = (urlsplit(str(item.get("url") or "")).hostname or "").lower()
        if request.include_domains and not any(_within(host, domain) for domain in request.include_domains):
            continue
        if any(_within(host, domain) for domain in request.exclude_domains):
            continue
        result = _result(item.get("title"), item.get("url"), item.get("publishedDate"), item.get("author"))
        if item.get("content"):
            result["highlights"] = [item["content"]]
        results.append(result)
        if len(results) == request.num_results:
            break
    return results


def _items(response: httpx.Response) -> list[dict[str, Any]]:
    """The result objects of a search API's answer (``raise_for_status`` first)."""
    response.raise_for_status()
    try:
        answer = response.json()
    except ValueError as exc:
        raise _Unreadable(f"not JSON: {exc}") from None
    results = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(results, list):
        raise _Unreadable("no results list")
    return [item for item in results if isinstance(item, dict)]


def _given(value: Any, default: Any) -> Any:
    return default if value is None else value


def _result(title: Any, url: Any, published_date: Any, author: Any) -> dict[str, Any]:
    return {"title": title, "url": url, "published_date": published_date, "author": author}


def _domain(text: Any) -> str:
    value = str(text).strip().lower()
    host = urlsplit(value if "//" in value else f"//{value}").hostname or value
    return host.removeprefix("www.")


def _within(host: str, domain: str) -> bool:
    return host == domain or host.endswith(f".{domain}")


async def _web_search(arguments: dict[str, Any], context: ToolContext) -> str:
    query = str(arguments.get("query") or "")
    if not query.strip():
        return json.dumps({"error": "Query cannot be empty", "query": query})
    provider = search_provider(context.env_vars)
    try:
        results = await search(provider, SearchRequest.from_arguments(arguments))
    except SearchFailed as exc:
        return json.dumps({"query": query, "error": f"Search failed: {exc}"})
    return json.dumps({"query": query, "results": results}, indent=2, ensure_ascii=False)


def _search_wall_seconds() -> float:
    return float(settings.WEB_SEARCH_TIMEOUT_SECONDS) + MARGIN_SECONDS


WEB_SEARCH = BuiltinTool(
    name="web_search",
    tool_type="letta_builtin",
    description=(
        "Search the web and retrieve relevant content.\n\n"
        "Examples:\n"
        'web_search("Tesla Q1 2025 earnings report", num_results=5, category="financial report")\n'
        'web_search("Latest research in large language models", category="research paper", '
        'include_domains=["arxiv.org", "paperswithcode.com"])\n'
        'web_search("Letta API documentation core_memory_append", num_results=3)'
    ),
    parameters=parameters(
        {
            "query": prop("string", "The search query to find relevant web content."),
            "num_results": prop("integer", "Number of results to return (1-100). Defaults to 10."),
            "category": prop("string", "Focus search on specific content types. Defaults to None.", enum=CATEGORIES),
            "include_text": prop(
                "boolean",
                "Whether to retrieve full page content. Defaults to False (only returns summary and highlights, "
                "since the full text usually will overflow the context window).",
            ),
            "include_domains": {**_STRINGS, "description": "List of domains to include in search results."},
            "exclude_domains": {**_STRINGS, "description": "List of domains to exclude from search results."},
            "start_published_date": prop(
                "string", "Only return content published after this date (ISO format). Defaults to None."
            ),
            "end_published_date": prop(
                "string", "Only return content published before this date (ISO format). Defaults to None."
            ),
            "user_location": prop(
                "string", 'Two-letter country code for localized results (e.g., "US"). Defaults to None.'
            ),
        },
        required=["query"],
    ),
    run=_web_search,
    enable_parallel_execution=True,
    wall_seconds=_search_wall_seconds,
)
