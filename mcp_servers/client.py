"""Talking to an MCP server with the ``mcp`` SDK: list its tools, call one, never past a deadline.

Every operation connects (streamable HTTP or SSE), does its work and closes, all inside one
hard deadline (``anyio.fail_after``): the connect timeout plus the list or call timeout. A
server that hangs, disconnects mid-call, answers 401 or answers garbage raises one of
``mcp_servers.errors``, never leaves a caller waiting. Messages never hold the headers.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
from django.conf import settings
from mcp import Client, MCPError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import REQUEST_TIMEOUT, CallToolResult, Implementation
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from mcp_servers.egress import check_mcp_url
from mcp_servers.errors import (
    MCPAuthorizationRequired,
    MCPConnectionFailed,
    MCPProtocolError,
    MCPTimeout,
    UnsafeMCPURL,
)
from mcp_servers.models import MCPServer, ServerType

logger = logging.getLogger(__name__)

CLIENT_INFO = Implementation(name="letta-django", version="1")
TEMPLATE = re.compile(r"\{\{\s*([A-Z_][A-Z0-9_]*)\s*(?:\|\s*([^}]*?)\s*)?\}\}")


@dataclass(frozen=True)
class Endpoint:
    """Where and how to connect; built from a row with ``endpoint_for``."""

    name: str
    server_type: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)


def resolve_template(value: str, variables: Mapping[str, str]) -> str:
    """``{{ VAR }}`` / ``{{ VAR | default }}`` from ``variables``; the text unchanged if any stays unresolved."""
    unresolved = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal unresolved
        name, default = match.group(1), match.group(2)
        if name in variables:
            return variables[name]
        if default is not None:
            return default
        unresolved = True
        return match.group(0)

    resolved = TEMPLATE.sub(substitute, value)
    return value if unresolved else resolved


def endpoint_for(
    server: MCPServer, *, variables: Mapping[str, str] | None = None, agent_id: str = "", oauth_token: str = ""
) -> Endpoint:
    """The server's connection: its custom headers (templates resolved) or, without any, its bearer token
    or else the OAuth access token of the organization's connection (``mcp_servers.oauth.oauth_bearer``)."""
    variables = variables or {}
    headers = {
        key.strip().strip("\"'").rstrip(":"): value.strip().strip("\"'") for key, value in server.custom_headers.items()
    }
    headers = {key: resolve_template(value, variables) for key, value in headers.items()}
    if not headers and server.token:
        headers["Authorization"] = f"Bearer {resolve_template(server.token, variables)}"
    elif not headers and oauth_token:
        headers["Authorization"] = f"Bearer {oauth_token}"
    if agent_id:
        headers["X-Agent-Id"] = agent_id
    return Endpoint(name=server.server_name, server_type=server.server_type, url=server.server_url, headers=headers)


def _timeouts() -> tuple[float, float, float]:
    return (
        float(settings.MCP_CONNECT_TIMEOUT),
        float(settings.MCP_LIST_TOOLS_TIMEOUT),
        float(settings.MCP_CALL_TIMEOUT),
    )


@dataclass
class _Statuses:
    """The HTTP statuses the server answered (the SDK keeps a 401 to itself: it becomes a generic error)."""

    unauthorized: bool = False

    async def record(self, response: httpx2.Response) -> None:
        if response.status_code == 401:
            self.unauthorized = True

    def http_client(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, event_hooks={"response": [self.record]})


@contextlib.asynccontextmanager
async def _connected(endpoint: Endpoint, *, read_timeout: float, statuses: _Statuses) -> AsyncIterator[Client]:
    connect, _list, _call = _timeouts()
    await anyio.to_thread.run_sync(check_mcp_url, endpoint.url)
    timeout = httpx2.Timeout(connect, read=read_timeout)
    if endpoint.server_type == ServerType.SSE:
        transport: Any = sse_client(
            endpoint.url,
            headers=dict(endpoint.headers),
            timeout=connect,
            sse_read_timeout=read_timeout,
            httpx_client_factory=statuses.http_client,
        )
        async with Client(transport, read_timeout_seconds=read_timeout, client_info=CLIENT_INFO) as client:
            yield client
        return
    async with statuses.http_client(headers=dict(endpoint.headers), timeout=timeout) as http:
        transport = streamable_http_client(endpoint.url, http_client=http)
        async with Client(transport, read_timeout_seconds=read_timeout, client_info=CLIENT_INFO) as client:
            yield client


async def list_tools(endpoint: Endpoint) -> list[MCPTool]:
    """Every tool the server offers (all pages), within the connect and list timeouts."""
    connect, list_seconds, _call = _timeouts()
    tools: list[MCPTool] = []
    statuses = _Statuses()
    with _translated(endpoint, "listing its tools", list_seconds, connect + list_seconds, statuses):
        with anyio.fail_after(connect + list_seconds):
            async with _connected(endpoint, read_timeout=list_seconds, statuses=statuses) as client:
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
    return tools


async def call_tool(endpoint: Endpoint, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """Call ``name`` with ``arguments``; the whole call (connecting included) ends within its deadline."""
    connect, _list, call_seconds = _timeouts()
    statuses = _Statuses()
    with _translated(endpoint, f"calling {name}", call_seconds, connect + call_seconds, statuses):
        with anyio.fail_after(connect + call_seconds):
            async with _connected(endpoint, read_timeout=call_seconds, statuses=statuses) as client:
                return await client.call_tool(name, arguments, read_timeout_seconds=call_seconds)
    raise AssertionError("unreachable")  # pragma: no cover - the block returns or raises


@contextlib.contextmanager
def _translated(endpoint: Endpoint, doing: str, seconds: float, deadline: float, statuses: _Statuses) -> Any:
    """Turn what the SDK and the network raise into ``mcp_servers.errors``, with safe messages.

    ``seconds`` is the read timeout of the operation, ``deadline`` the hard one (connecting included).
    """
    try:
        yield
    except (MCPConnectionFailed, MCPTimeout, UnsafeMCPURL):
        raise
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit, anyio.get_cancelled_exc_class())) and not isinstance(
            exc, TimeoutError
        ):
            raise
        if statuses.unauthorized:
            raise _unauthorized(endpoint) from exc
        leaf = _leaf(exc)
        if isinstance(leaf, TimeoutError):
            seconds = deadline
        error = _translate(endpoint, doing, seconds, leaf)
        if error is None:
            raise
        raise error from exc


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, which the SDK's task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _unauthorized(endpoint: Endpoint) -> MCPAuthorizationRequired:
    return MCPAuthorizationRequired(
        f"The MCP server {endpoint.name} requires authorization (HTTP 401): connect it with OAuth in the browser "
        "(Connect on the MCP servers page, or the connect stream GET /v1/mcp-servers/connect/{id}), "
        "or give it a token or headers."
    )


def _translate(endpoint: Endpoint, doing: str, seconds: float, exc: BaseException) -> Exception | None:
    name = endpoint.name
    timed_out = isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT
    if timed_out or isinstance(exc, TimeoutError | httpx2.TimeoutException):
        return MCPTimeout(f"The MCP server {name} did not answer within {seconds:g} s while {doing}.")
    if isinstance(exc, httpx2.HTTPStatusError):
        status = exc.response.status_code
        if status == 401:
            return _unauthorized(endpoint)
        return MCPConnectionFailed(f"The MCP server {name} answered HTTP {status} while {doing}.")
    if isinstance(exc, httpx2.ConnectError | OSError):
        return MCPConnectionFailed(f"Could not connect to the MCP server {name} ({type(exc).__name__}).")
    if isinstance(exc, httpx2.TransportError):
        return MCPConnectionFailed(f"The MCP server {name} broke the connection while {doing} ({type(exc).__name__}).")
    if isinstance(exc, MCPError):
        return MCPProtocolError(f"The MCP server {name} returned an error while {doing}: {exc}")
    if isinstance(exc, ValidationError):
        return MCPProtocolError(f"The MCP server {name} answered something that is not valid MCP while {doing}.")
    if isinstance(exc, Exception):
        logger.warning("MCP server %s failed while %s: %s", name, doing, type(exc).__name__, exc_info=exc)
        return MCPConnectionFailed(f"The MCP server {name} failed while {doing} ({type(exc).__name__}).")
    return None
