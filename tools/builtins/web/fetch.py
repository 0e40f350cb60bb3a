"""``fetch_webpage``: Letta's page fetcher, through the egress guard.

``fetch_webpage`` needs no configuration. It fetches the page itself through the egress
guard (``core.egress.public_addresses``): the host is resolved once, every address must be
public or named in ``WEB_FETCH_ALLOWED_PRIVATE_HOSTS``, and the connection goes to the
address that was checked (the URL names it, the ``Host`` header and TLS name keep the host
name), so a second DNS answer cannot send it elsewhere. Redirects are followed by hand,
each through the same check; environment proxies are ignored for the same reason. The
body is capped (``WEB_FETCH_MAX_BYTES``), and so are the connect, read and total times.
HTML becomes Markdown with trafilatura (what Letta uses: it keeps the main text and drops
navigation and boilerplate); other text comes back as it is; binary content is an error.
"""

from __future__ import annotations

import asyncio
import codecs
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

import httpx
import trafilatura
from django.conf import settings

from core.egress import PrivateAddress, public_addresses
from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

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

MARGIN_SECONDS = 15.0


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
    return float(settings.WEB_FETCH_TOTAL_TIMEOUT_SECONDS) + MARGIN_SECONDS


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
