"""Talking to an MCP server with the ``mcp`` SDK: list its tools, call one, never past a deadline.

Every operation uses the server's open session (``SessionPool``: one per server and headers in
this process) or connects (streamable HTTP or SSE), all inside one hard deadline
(``anyio.fail_after``): the connect timeout plus the list or call timeout. A
server that hangs, disconnects mid-call, answers 401 or answers garbage raises one of
``mcp_servers.errors``, never leaves a caller waiting. Messages never hold the headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import httpx2
from django.conf import settings
from mcp import Client, MCPError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_REQUEST,
    REQUEST_TIMEOUT,
    CallToolResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    Implementation,
)
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from mcp_servers.egress import check_mcp_url
from mcp_servers.errors import (
    MCPAuthorizationRequired,
    MCPConnectionFailed,
    MCPElicitationRequired,
    MCPProtocolError,
    MCPTimeout,
    UnsafeMCPURL,
)
from mcp_servers.models import MCPServer, ServerType
from tools.base import ElicitationReply

logger = logging.getLogger(__name__)
T = TypeVar("T")

CLIENT_INFO = Implementation(name="letta-django", version="1")
ELICITATION_UNANSWERED = (
    "No answer yet: the person is asked, and the call is made again with their answer (elicitation is answered "
    "on the next call)."
)
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
    """What the server did on a connection: answered 401 (the SDK keeps that to itself: it becomes a generic
    error), or asked for input mid-call (elicitation).

    A question that one of ``replies`` answers (the same message and schema: a person's answer to it on an
    earlier run of the call) gets that answer; any other is recorded in ``elicitations`` and refused with an
    error at once, so the call ends promptly and no session waits for a person.
    """

    unauthorized: bool = False
    elicitations: list[dict[str, Any]] = field(default_factory=list)
    replies: list[ElicitationReply] = field(default_factory=list)

    async def elicit(self, context: Any, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        asked: dict[str, Any]
        if isinstance(params, ElicitRequestFormParams):
            asked = {"message": params.message, "requested_schema": dict(params.requested_schema)}
            for reply in self.replies:
                if reply.message == asked["message"] and reply.requested_schema == asked["requested_schema"]:
                    self.replies.remove(reply)
                    return ElicitResult(
                        action=reply.action, content=reply.content if reply.action == "accept" else None
                    )
        else:
            asked = {"message": str(getattr(params, "message", "") or ""), "requested_schema": None}
        self.elicitations.append(asked)
        return ErrorData(code=INVALID_REQUEST, message=ELICITATION_UNANSWERED)

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
        async with Client(
            transport, read_timeout_seconds=read_timeout, client_info=CLIENT_INFO, elicitation_callback=statuses.elicit
        ) as client:
            yield client
        return
    async with statuses.http_client(headers=dict(endpoint.headers), timeout=timeout) as http:
        transport = streamable_http_client(endpoint.url, http_client=http)
        async with Client(
            transport, read_timeout_seconds=read_timeout, client_info=CLIENT_INFO, elicitation_callback=statuses.elicit
        ) as client:
            yield client


async def list_tools(endpoint: Endpoint) -> list[MCPTool]:
    """Every tool the server offers (all pages), within the connect and list timeouts."""
    connect, list_seconds, _call = _timeouts()
    statuses = _Statuses()

    async def every_page(client: Client) -> list[MCPTool]:
        tools: list[MCPTool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    with _translated(endpoint, "listing its tools", list_seconds, connect + list_seconds, statuses):
        return await SESSIONS.run(endpoint, every_page, deadline=connect + list_seconds, statuses=statuses)
    raise AssertionError("unreachable")  # pragma: no cover - the block returns or raises


async def call_tool(
    endpoint: Endpoint, name: str, arguments: dict[str, Any], *, replies: tuple[ElicitationReply, ...] = ()
) -> CallToolResult:
    """Call ``name`` with ``arguments``; the whole call (connecting included) ends within its deadline.

    ``replies`` answer the server's questions if it asks them again (a person's answers on earlier calls);
    a question nothing answers ends the call with ``MCPElicitationRequired``.
    """
    connect, _list, call_seconds = _timeouts()
    statuses = _Statuses(replies=list(replies))

    async def call(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments, read_timeout_seconds=call_seconds)

    try:
        with _translated(endpoint, f"calling {name}", call_seconds, connect + call_seconds, statuses):
            return await SESSIONS.run(endpoint, call, deadline=connect + call_seconds, statuses=statuses)
    finally:
        if statuses.elicitations:
            asked = "; ".join(f'"{request["message"]}"' for request in statuses.elicitations)
            raise MCPElicitationRequired(
                f"The MCP server {endpoint.name} asked for input while calling {name} (elicitation: {asked}), "
                "and no answer was given, so the call did not complete.",
                list(statuses.elicitations),
            )
    raise AssertionError("unreachable")  # pragma: no cover - the block returns or raises


@dataclass
class _Held:
    """One open session: the task holding the connection open, and when it was last used."""

    client: Client
    task: asyncio.Task[None]
    statuses: _Statuses
    last_used: float = 0.0
    busy: int = 0


class SessionPool:
    """MCP sessions kept open per server (and headers) in this process, on an event loop of their own.

    A call uses the open session or opens one (within the connect timeout); an error, a timeout
    or a cancellation drops the session, so the next call connects afresh. Idle sessions close
    after ``MCP_SESSION_IDLE_SECONDS``; at most ``MCP_SESSION_POOL_SIZE`` stay open. The callers'
    loops come and go (``async_to_sync``), so the sessions live on the pool's own loop; a
    cancelled caller cancels its call there at once.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0
        self._held: dict[tuple[Any, ...], _Held] = {}
        self._opening: dict[tuple[Any, ...], asyncio.Lock] = {}

    def _pool_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="mcp-sessions", daemon=True).start()
                self._loop, self._pid, self._held, self._opening = loop, os.getpid(), {}, {}
            return self._loop

    async def run(
        self, endpoint: Endpoint, work: Callable[[Client], Awaitable[T]], *, deadline: float, statuses: _Statuses
    ) -> T:
        if not settings.MCP_REUSE_SESSIONS:
            _connect, list_seconds, call_seconds = _timeouts()
            with anyio.fail_after(deadline):
                read = max(list_seconds, call_seconds)
                async with _connected(endpoint, read_timeout=read, statuses=statuses) as client:
                    return await work(client)
        future = asyncio.run_coroutine_threadsafe(self._run(endpoint, work, deadline, statuses), self._pool_loop())
        return await asyncio.wrap_future(future)

    def is_open(self, endpoint: Endpoint) -> bool:
        """Whether a session to ``endpoint`` is open in this process."""
        held = self._held.get(_key(endpoint))
        return held is not None and not held.task.done()

    async def _run(
        self, endpoint: Endpoint, work: Callable[[Client], Awaitable[T]], deadline: float, statuses: _Statuses
    ) -> T:
        key = _key(endpoint)
        with anyio.fail_after(deadline):
            held = await self._session(key, endpoint, statuses)
            held.busy += 1
            asked = len(held.statuses.elicitations)
            lent = [] if held.statuses is statuses else list(statuses.replies)
            held.statuses.replies.extend(lent)
            job = asyncio.ensure_future(work(held.client))
            try:
                await asyncio.wait({job, held.task}, return_when=asyncio.FIRST_COMPLETED)
                if not job.done():
                    # The connection ended under the call: its error (a broken transport) is the answer.
                    job.cancel()
                    error = held.task.exception() if not held.task.cancelled() else None
                    raise error or ConnectionError("The MCP session closed.")
                return job.result()
            except BaseException:
                job.cancel()
                statuses.unauthorized = statuses.unauthorized or held.statuses.unauthorized
                self._drop(key, held)
                raise
            finally:
                held.busy -= 1
                held.last_used = time.monotonic()
                for reply in lent:
                    if reply in held.statuses.replies:
                        held.statuses.replies.remove(reply)
                if held.statuses is not statuses:
                    statuses.elicitations.extend(held.statuses.elicitations[asked:])
                if len(held.statuses.elicitations) > asked:
                    # A question was declined on this session, and what the server keeps of it is not known
                    # (the SDK's own SSE server closed later connections): later calls connect afresh.
                    self._retire(key, held)
                elif self._held.get(key) is not held and held.busy == 0:
                    held.task.cancel()  # retired by another call while this one still used it
        raise AssertionError("unreachable")  # pragma: no cover - the block returns or raises

    async def _session(self, key: tuple[Any, ...], endpoint: Endpoint, statuses: _Statuses) -> _Held:
        lock = self._opening.setdefault(key, asyncio.Lock())
        async with lock:
            held = self._held.get(key)
            if held is not None and not held.task.done():
                return held
            self._evict()
            held = await self._open(endpoint, statuses)
            self._held[key] = held
            return held

    async def _open(self, endpoint: Endpoint, statuses: _Statuses) -> _Held:
        _connect, list_seconds, call_seconds = _timeouts()
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()

        async def hold() -> None:
            try:
                read = max(list_seconds, call_seconds)
                async with _connected(endpoint, read_timeout=read, statuses=statuses) as client:
                    ready.set_result(client)
                    await anyio.sleep_forever()
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
                raise

        task = asyncio.ensure_future(hold())
        task.add_done_callback(_quiet)
        try:
            client = await ready
        except BaseException:
            task.cancel()
            raise
        return _Held(client=client, task=task, statuses=statuses, last_used=time.monotonic())

    def _retire(self, key: tuple[Any, ...], held: _Held) -> None:
        """Take ``held`` out of the pool; it closes once no call is using it."""
        if self._held.get(key) is held:
            del self._held[key]
        if held.busy == 0:
            held.task.cancel()

    def _drop(self, key: tuple[Any, ...], held: _Held) -> None:
        if self._held.get(key) is held:
            del self._held[key]
        held.task.cancel()

    def _evict(self) -> None:
        now = time.monotonic()
        idle = float(settings.MCP_SESSION_IDLE_SECONDS)
        for key, held in list(self._held.items()):
            if held.task.done() or (held.busy == 0 and now - held.last_used > idle):
                self._drop(key, held)
        oldest = sorted((held.last_used, key) for key, held in self._held.items() if held.busy == 0)
        for _used, key in oldest[: max(0, len(self._held) - int(settings.MCP_SESSION_POOL_SIZE) + 1)]:
            self._drop(key, self._held[key])


def _key(endpoint: Endpoint) -> tuple[Any, ...]:
    return (endpoint.server_type, endpoint.url, tuple(sorted(endpoint.headers.items())))


def _quiet(task: asyncio.Task[None]) -> None:
    """Read a held session's end, so an idle connection that died is not logged as a lost error."""
    if not task.cancelled() and task.exception() is not None:
        logger.debug("An idle MCP session ended: %s", type(task.exception()).__name__)


SESSIONS = SessionPool()


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
    if isinstance(exc, httpx2.TransportError) or (isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED):
        return MCPConnectionFailed(f"The MCP server {name} broke the connection while {doing} ({type(exc).__name__}).")
    if isinstance(exc, MCPError):
        return MCPProtocolError(f"The MCP server {name} returned an error while {doing}: {exc}")
    if isinstance(exc, ValidationError):
        return MCPProtocolError(f"The MCP server {name} answered something that is not valid MCP while {doing}.")
    if isinstance(exc, Exception):
        logger.warning("MCP server %s failed while %s: %s", name, doing, type(exc).__name__, exc_info=exc)
        return MCPConnectionFailed(f"The MCP server {name} failed while {doing} ({type(exc).__name__}).")
    return None
