"""Real MCP servers for the tests, run as their own processes: ``python servers.py KIND TRANSPORT PORT``.

``KIND`` is ``tools`` (a read-only, a destructive and a structured tool), ``hang`` (a tool that
never answers), ``disconnect`` (a tool whose server dies mid-call), ``invalid`` (a tool whose
input schema is not a valid JSON schema) or ``oauth`` (every request answers 401 with an OAuth
challenge). ``TRANSPORT`` is ``streamable_http`` (path ``/mcp``) or ``sse`` (path ``/sse``).
"""

from __future__ import annotations

import asyncio
import os
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def tools_server() -> MCPServer:
    server = MCPServer("test-tools")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup_weather(city: str) -> str:
        """Today's weather in a city."""
        return f"Sunny in {city}, 21 C"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_records(table: str) -> str:
        """Delete every record of a table."""
        return f"Deleted every record of {table}"

    @server.tool()
    def add_numbers(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def fail_always(reason: str) -> str:
        """Raise an error with the given reason."""
        raise ValueError(reason)

    return server


def hang_server() -> MCPServer:
    server = MCPServer("test-hang")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def wait_forever(note: str) -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return note

    return server


def disconnect_server() -> MCPServer:
    server = MCPServer("test-disconnect")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def crash(note: str) -> str:
        """The server process dies while answering."""
        await asyncio.sleep(0.2)
        os._exit(3)

    return server


def invalid_server() -> MCPServer:
    server = MCPServer("test-invalid")

    @server.tool()
    def broken(value: str) -> str:
        """A tool whose schema does not validate."""
        return value

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def fine(value: str) -> str:
        """A tool whose schema is fine."""
        return value

    server._tool_manager._tools["broken"].parameters = {
        "type": "object",
        "properties": {"value": {"type": "no-such-type"}},
    }
    return server


def oauth_app() -> Starlette:
    async def challenge(request: Request) -> JSONResponse:
        header = f'Bearer resource_metadata="http://{request.url.netloc}/.well-known/oauth-protected-resource"'
        return JSONResponse({"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": header})

    return Starlette(routes=[Route("/{path:path}", challenge, methods=["GET", "POST", "DELETE"])])


SERVERS = {"tools": tools_server, "hang": hang_server, "disconnect": disconnect_server, "invalid": invalid_server}


def main(kind: str, transport: str, port: int) -> None:
    if kind == "oauth":
        uvicorn.run(oauth_app(), host="127.0.0.1", port=port, log_level="warning")
        return
    server = SERVERS[kind]()
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
