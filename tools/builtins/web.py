"""``web_search`` and ``fetch_webpage``: Letta's web built-ins, with Letta's names, parameters and answers.

``fetch_webpage`` needs no configuration. It fetches the page itself through the egress
guard (``core.egress.public_addresses``): the host is resolved once, every address must be
public or named in ``WEB_FETCH_ALLOWED_PRIVATE_HOSTS``, and the connection goes to the
address that was checked (the URL names it, the ``Host`` header and TLS name keep the host
name), so a second DNS answer cannot send it elsewhere. Redirects are followed by hand,
each through the same check; environment proxies are ignored for the same reason. The
body is capped (``WEB_FETCH_MAX_BYTES``), and so are the connect, read and total times.
HTML becomes Markdown with trafilatura (what Letta uses: it keeps the main text and drops
navigation and boilerplate); other text comes back as it is; binary content is an error.

``web_search`` asks the search API the operator configures (``WEB_SEARCH_PROVIDER``: Exa as
Letta, Tavily or a self-hosted SearXNG). An agent's tool variable ``EXA_API_KEY`` or
``TAVILY_API_KEY`` overrides the server's, as on Letta. The answer is Letta's JSON; a
blank query and a failed search are answered the way Letta answers them (as results).
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

import httpx
import trafilatura
from django.conf import settings

from core.egress import PrivateAddress, public_addresses
from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

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
# Seconds the runner adds to a tool's own network limit: turning a page into Markdown, reading the answer.
_MARGIN_SECONDS = 15.0
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/x-sh",
        "application/csv",
    }
)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_STRINGS = {"type": "array", "items": {"type": "string"}}


# --- fetch_webpage ------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchLimits:
    connect_seconds: float
    read_seconds: float
    total_seconds: float
    max_bytes: int
    max_redirects: int
    user_agent: str
    allowed_private_hosts: tuple[str, ...]

    @classmethod
    def from_settings(cls) -> FetchLimits:
        return cls(
            connect_seconds=float(settings.WEB_FETCH_CONNECT_TIMEOUT_SECONDS),
            read_seconds=float(settings.WEB_FETCH_READ_TIMEOUT_SECONDS),
            total_seconds=float(settings.WEB_FETCH_TOTAL_TIMEOUT_SECONDS),
            max_bytes=int(settings.WEB_FETCH_MAX_BYTES),
            max_redirects=int(settings.WEB_FETCH_MAX_REDIRECTS),
            user_agent=str(settings.WEB_FETCH_USER_AGENT),
            allowed_private_hosts=tuple(str(entry) for entry in settings.WEB_FETCH_ALLOWED_PRIVATE_HOSTS or ()),
        )


@dataclass(frozen=True)
class Page:
    url: str
    content_type: str
    body: bytes


@dataclass(frozen=True)
class _Target:
    """Where one request goes: the URL with each checked address in place of the host name."""

    url: str
    connect_urls: tuple[httpx.URL, ...]
    host: str
    host_header: str


def check_scheme(url: str) -> None:
    """Letta's refusal of anything but http and https (``file://`` above all)."""
    scheme = urlsplit(url).scheme
    if scheme not in {"http", "https"}:
        raise ToolError(
            f"Invalid URL scheme '{scheme}'. Only 'http' and 'https' URLs are supported. "
            "Local file paths (file://) and other protocols cannot be fetched."
        )


async def fetch_page(url: str, limits: FetchLimits) -> Page:
    """GET ``url`` within ``limits``, following redirects through the egress check; ``ToolError`` on failure."""
    check_scheme(url)
    try:
        async with asyncio.timeout(limits.total_seconds):
            return await _follow(url, limits)
    except TimeoutError:
        raise ToolError(
            f"Error fetching webpage: {url} took longer than {limits.total_seconds:g} s in all "
            "(WEB_FETCH_TOTAL_TIMEOUT_SECONDS)."
        ) from None


async def _follow(url: str, limits: FetchLimits) -> Page:
    timeout = httpx.Timeout(
        connect=limits.connect_seconds, read=limits.read_seconds, write=limits.read_seconds, pool=limits.connect_seconds
    )
    headers = {"User-Agent": limits.user_agent, "Accept": "text/html,application/xhtml+xml,text/*;q=0.9,*/*;q=0.5"}
    # trust_env off: a proxy from the environment would resolve the host again, past the check.
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        current = url
        for _ in range(limits.max_redirects + 1):
            target = await _checked_target(current, first=url, limits=limits)
            response = await _send(client, target, headers, limits)
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    current = urljoin(current, location)
                    check_scheme(current)
                    continue
                if response.status_code >= 400:
                    raise ToolError(
                        f"Error fetching webpage: {current} answered HTTP {response.status_code} "
                        f"{response.reason_phrase}."
                    )
                body = await _read_capped(response, current, limits)
                return Page(url=current, content_type=response.headers.get("content-type", ""), body=body)
            finally:
                await response.aclose()
    raise ToolError(f"Error fetching webpage: more than {limits.max_redirects} redirects (WEB_FETCH_MAX_REDIRECTS).")


async def _send(
    client: httpx.AsyncClient, target: _Target, headers: dict[str, str], limits: FetchLimits
) -> httpx.Response:
    """The response headers from the first checked address that accepts the connection."""
    failure: httpx.HTTPError | None = None
    for connect_url in target.connect_urls:
        request = client.build_request(
            "GET",
            connect_url,
            headers={**headers, "Host": target.host_header},
            extensions={"sni_hostname": target.host},
        )
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as exc:  # refused or unreachable: the host's next address
            failure = exc
        except httpx.ConnectTimeout:
            raise ToolError(
                f"Error fetching webpage: {target.host} did not accept a connection within "
                f"{limits.connect_seconds:g} s (WEB_FETCH_CONNECT_TIMEOUT_SECONDS)."
            ) from None
        except httpx.TimeoutException:
            raise _read_timeout(target.url, limits) from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Error fetching webpage: {type(exc).__name__}: {exc}") from None
    raise ToolError(f"Error fetching webpage: {target.host} refused the connection ({failure}).")


async def _checked_target(url: str, *, first: str, limits: FetchLimits) -> _Target:
    try:
        parts = httpx.URL(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except httpx.InvalidURL as exc:
        raise ToolError(f"Invalid URL {url!r}: {exc}.") from None
    host = parts.host
    if not host:
        raise ToolError(f"Invalid URL {url!r}: it has no host name.")
    try:
        addresses = await asyncio.wait_for(
            asyncio.to_thread(public_addresses, host, port, allowed=limits.allowed_private_hosts),
            timeout=limits.connect_seconds,
        )
    except PrivateAddress as exc:
        via = "" if url == first else f" (a redirect from {first})"
        raise ToolError(
            f"Refused to fetch {url}{via}: {exc}; the server operator can allow it (WEB_FETCH_ALLOWED_PRIVATE_HOSTS)."
        ) from None
    except (OSError, UnicodeError, TimeoutError):
        raise ToolError(f"Error fetching webpage: the host {host} cannot be resolved.") from None
    if not addresses:
        raise ToolError(f"Error fetching webpage: the host {host} cannot be resolved.")
    name = f"[{host}]" if ":" in host else host
    return _Target(
        url=url,
        connect_urls=tuple(parts.copy_with(host=str(address)) for address in addresses),
        host=host,
        host_header=name if parts.port is None else f"{name}:{parts.port}",
    )


async def _read_capped(response: httpx.Response, url: str, limits: FetchLimits) -> bytes:
    too_big = ToolError(f"Error fetching webpage: {url} is larger than {limits.max_bytes} bytes (WEB_FETCH_MAX_BYTES).")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.max_bytes:
        raise too_big
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limits.max_bytes:
                raise too_big
            chunks.append(chunk)
    except httpx.TimeoutException:
        raise _read_timeout(url, limits) from None
    except httpx.HTTPError as exc:
        raise ToolError(f"Error fetching webpage: {type(exc).__name__}: {exc}") from None
    return b"".join(chunks)


def _read_timeout(url: str, limits: FetchLimits) -> ToolError:
    return ToolError(
        f"Error fetching webpage: {url} sent nothing for {limits.read_seconds:g} s (WEB_FETCH_READ_TIMEOUT_SECONDS)."
    )


def page_kind(content_type: str, body: bytes) -> Literal["html", "text", "binary"]:
    """What the body is, from its media type, or from its first bytes when the server names none."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in _HTML_TYPES:
        return "html"
    if media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml")):
        return "text"
    if media:
        return "binary"
    if b"\x00" in body[:8192]:
        return "binary"
    if body[:1024].lstrip().lower().startswith((b"<!doctype html", b"<html")):
        return "html"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "binary"
    return "text"


def page_text(page: Page) -> str:
    """The page as the model reads it: Markdown for HTML, the text itself otherwise (blocking: a thread)."""
    kind = page_kind(page.content_type, page.body)
    if kind == "binary":
        media = page.content_type.split(";", 1)[0].strip() or "binary"
        raise ToolError(
            f"fetch_webpage cannot read {media} content ({page.url}): only HTML and text pages are supported."
        )
    if kind == "html":
        text = trafilatura.extract(
            page.body,
            url=page.url,
            output_format="markdown",
            include_links=True,
            include_formatting=True,
            include_tables=True,
            include_images=False,
            include_comments=False,
            favor_recall=True,
        ) or trafilatura.html2txt(page.body)
    else:
        text = page.body.decode(_charset(page.content_type), errors="replace")
    return text if text.strip() else f"The page at {page.url} has no text."


def _charset(content_type: str) -> str:
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                break
    return "utf-8"


async def _fetch_webpage(arguments: dict[str, Any], context: ToolContext) -> str:
    page = await fetch_page(str(arguments["url"]).strip(), FetchLimits.from_settings())
    return await asyncio.to_thread(page_text, page)


def _fetch_wall_seconds() -> float:
    return float(settings.WEB_FETCH_TOTAL_TIMEOUT_SECONDS) + _MARGIN_SECONDS


FETCH_WEBPAGE = BuiltinTool(
    name="fetch_webpage",
    tool_type="letta_builtin",
    description="Fetch a webpage and convert it to markdown/text format using trafilatura.",
    parameters=parameters(
        {"url": prop("string", "The URL of the webpage to fetch and convert")},
        required=["url"],
    ),
    run=_fetch_webpage,
    enable_parallel_execution=True,
    wall_seconds=_fetch_wall_seconds,
)


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
    return float(settings.WEB_SEARCH_TIMEOUT_SECONDS) + _MARGIN_SECONDS


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


def web_tools() -> list[BuiltinTool]:
    return [WEB_SEARCH, FETCH_WEBPAGE]
