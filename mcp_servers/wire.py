"""Letta's JSON for MCP servers: the 1.x server (flat, by type) and the legacy name-keyed config.

Secrets never leave in full: a stored token reads as ``Bearer ****`` plus its last four
characters, a header value likewise, except a ``{{VAR}}`` template, which holds no secret.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired

from typing_extensions import TypedDict

from mcp_servers.client import TEMPLATE

if TYPE_CHECKING:
    from mcp_servers.models import MCPServer

MASK = "****"


class MCPServerJSON(TypedDict):
    id: str
    server_name: str
    mcp_server_type: str
    server_url: str | None
    auth_header: str | None
    auth_token: str | None
    custom_headers: dict[str, str] | None


class LegacyConfigJSON(TypedDict):
    server_name: str
    type: str
    server_url: str | None
    auth_header: str | None
    auth_token: str | None
    custom_headers: dict[str, str] | None


def masked(secret: str) -> str:
    """A secret shown only by its last four characters (none when it is short)."""
    return f"{MASK}{secret[-4:]}" if len(secret) >= 12 else MASK


def _header_value(value: str) -> str:
    return value if TEMPLATE.fullmatch(value.strip()) else masked(value)


def _auth(server: MCPServer) -> tuple[str | None, str | None, dict[str, str] | None]:
    token = server.token
    headers = {key: _header_value(value) for key, value in server.custom_headers.items()} or None
    if not token:
        return None, None, headers
    return "Authorization", f"Bearer {masked(token)}", headers


def server_json(server: MCPServer) -> MCPServerJSON:
    header, token, headers = _auth(server)
    return {
        "id": server.public_id,
        "server_name": server.server_name,
        "mcp_server_type": server.server_type,
        "server_url": server.server_url or None,
        "auth_header": header,
        "auth_token": token,
        "custom_headers": headers,
    }


def legacy_config_json(server: MCPServer) -> LegacyConfigJSON:
    header, token, headers = _auth(server)
    return {
        "server_name": server.server_name,
        "type": server.server_type,
        "server_url": server.server_url or None,
        "auth_header": header,
        "auth_token": token,
        "custom_headers": headers,
    }


class ToolRunJSON(TypedDict):
    status: str
    func_return: str
    agent_state: dict[str, Any] | None
    stdout: list[str] | None
    stderr: list[str] | None
    sandbox_config_fingerprint: str | None


class SyncJSON(TypedDict):
    deleted: list[str]
    updated: list[str]
    added: list[str]


class LegacyRunJSON(TypedDict):
    result: str
    success: bool


class LegacyTestJSON(TypedDict):
    status: str
    tools: list[dict[str, Any]]


class OAuthCallbackJSON(TypedDict):
    status: str
    message: str
    server_url: NotRequired[str]


class MCPErrorJSON(TypedDict):
    """An MCP route's error: ``detail`` is a message (``TIMEOUT: …`` on 408, the server's failure on 502),
    a list of ``{"loc", "msg", "type"}`` on 422, or Letta's ``{"code", "message", …}`` object on some 404s."""

    detail: Any
