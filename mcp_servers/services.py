"""Writes of MCP servers and their tools: create, change, delete, sync the tools, run one.

A server's tools become ordinary ``Tool`` rows (``kind="mcp"``, Letta's ``tool_type:
"external_mcp"``, tagged ``mcp:<server name>``), attached to agents like any tool. A tool the
server marks destructive (``destructiveHint``) is registered with ``default_requires_approval``,
so the one approval rule (``AgentTool.effective_policy``) asks a person unless the agent's own
policy for the tool says otherwise; a read-only one does not ask.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import Conflict, InvalidArgument
from mcp_servers import client, oauth
from mcp_servers.egress import check_mcp_url
from mcp_servers.errors import MCPConnectionFailed, MCPTimeout, StdioDisabled
from mcp_servers.models import MCPOAuthSession, MCPServer, ServerType
from mcp_servers.results import result_text
from mcp_servers.schemas import (
    DESTRUCTIVE_REASON,
    MAX_TOOL_NAME_CHARS,
    annotations_of,
    asks_by_default,
    health_of,
    parameters_of,
)
from mcp_servers.selectors import server_tools
from tools.models import Tool, ToolKind

if TYPE_CHECKING:
    from mcp.types import Tool as MCPTool

    from accounts.models import Organization, User

_UNSET: Any = object()


def _checked_config(server_type: str, server_url: str, stdio_config: Mapping[str, Any] | None) -> None:
    if server_type not in ServerType.values:
        raise InvalidArgument(f"Unknown MCP server type {server_type!r}.", field="mcp_server_type")
    if server_type == ServerType.STDIO:
        if not settings.MCP_ENABLE_STDIO:
            raise StdioDisabled()
        raise InvalidArgument("stdio MCP servers run only inside the tool sandbox, which this server does not offer.")
    check_mcp_url(server_url)


def server_create(
    *,
    organization: Organization,
    user: User | None,
    server_name: str,
    server_type: str,
    server_url: str = "",
    token: str | None = None,
    custom_headers: Mapping[str, str] | None = None,
    stdio_config: Mapping[str, Any] | None = None,
    sync_tools: bool = True,
) -> MCPServer:
    """Add a server and, best effort, register every tool whose schema is usable (as Letta does)."""
    if not server_name.strip():
        raise InvalidArgument("An MCP server needs a server_name.", field="server_name")
    _checked_config(server_type, server_url, stdio_config)
    server = MCPServer(
        organization=organization,
        created_by=user,
        server_name=server_name.strip(),
        server_type=server_type,
        server_url=server_url,
    )
    server.set_auth(token=token, custom_headers=dict(custom_headers or {}))
    try:
        with transaction.atomic():
            server.save()
    except IntegrityError as exc:
        raise Conflict(f"An MCP server named {server.server_name!r} already exists.") from exc
    if sync_tools:
        # Best effort: a failure is recorded on the row (last_error) and the server is added all the same.
        with contextlib.suppress(MCPConnectionFailed, MCPTimeout):
            server_refresh(server=server)
    return server


def server_update(
    *,
    server: MCPServer,
    server_name: str | None = None,
    server_url: str | None = None,
    token: str | None = _UNSET,
    custom_headers: Mapping[str, str] | None = _UNSET,
) -> MCPServer:
    """Change a server; a field left out keeps its value (so do the token and headers)."""
    if server_name is not None and server_name.strip():
        server.server_name = server_name.strip()
    if server_url is not None:
        _checked_config(server.server_type, server_url, None)
        server.server_url = server_url
    if token is not _UNSET or custom_headers is not _UNSET:
        server.set_auth(
            token=server.token if token is _UNSET else token,
            custom_headers=server.custom_headers if custom_headers is _UNSET else dict(custom_headers or {}),
        )
    try:
        with transaction.atomic():
            server.save()
            server_tools(server).update(tags=[f"mcp:{server.server_name}"])
    except IntegrityError as exc:
        raise Conflict(f"An MCP server named {server.server_name!r} already exists.") from exc
    return server


def server_delete(*, server: MCPServer) -> None:
    """Delete the server and the tools registered from it (detaching them from every agent)."""
    with transaction.atomic():
        server_tools(server).delete()
        server.delete()


def endpoint(
    server: MCPServer, *, variables: Mapping[str, str] | None = None, agent_id: str = "", user: User | None = None
) -> client.Endpoint:
    """How to reach ``server``: its headers or token, else the organization's OAuth connection to it."""
    bearer = ""
    if not server._state.adding and not server.token and not server.custom_headers:
        bearer = oauth.oauth_bearer(server=server, user=user)
    return client.endpoint_for(server, variables=variables, agent_id=agent_id, oauth_token=bearer)


def live_tools(*, server: MCPServer, variables: Mapping[str, str] | None = None) -> list[MCPTool]:
    """The tools the server offers now (a connection, within the timeouts); records how the check went."""
    if server._state.adding:
        return probe_tools(server=server)
    try:
        tools = async_to_sync(client.list_tools)(endpoint(server, variables=variables))
    except (MCPConnectionFailed, MCPTimeout) as exc:
        _record_check(server, str(exc))
        raise
    _record_check(server, "")
    return tools


def probe_tools(*, server: MCPServer) -> list[MCPTool]:
    """The tools of a server not saved yet (the legacy ``test`` and ``connect`` routes)."""
    return async_to_sync(client.list_tools)(endpoint(server))


def _record_check(server: MCPServer, error: str) -> None:
    server.last_checked_at = timezone.now()
    server.last_error = error
    MCPServer.objects.filter(pk=server.pk).update(last_checked_at=server.last_checked_at, last_error=error)


def server_refresh(*, server: MCPServer, variables: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Sync the registered tools with the server's: ``{"deleted", "updated", "added"}`` (names)."""
    offered = [tool for tool in live_tools(server=server, variables=variables) if _registrable(tool)]
    return sync_tools(server=server, offered=offered)


def server_oauth_connected(*, session: MCPOAuthSession, code: str) -> dict[str, list[str]]:
    """Finish an OAuth connection (tokens stored) and sync the server's tools with the new access."""
    oauth.oauth_complete(session=session, code=code)
    return server_refresh(server=session.server)


def _registrable(tool: MCPTool) -> bool:
    return health_of(tool).status != "INVALID" and len(tool.name) <= MAX_TOOL_NAME_CHARS


def sync_tools(*, server: MCPServer, offered: Iterable[MCPTool]) -> dict[str, list[str]]:
    offered_by_name = {tool.name: tool for tool in offered}
    changes: dict[str, list[str]] = {"deleted": [], "updated": [], "added": []}
    with transaction.atomic():
        existing = {tool.name: tool for tool in server_tools(server).select_for_update()}
        for name, row in existing.items():
            if name not in offered_by_name:
                row.delete()
                changes["deleted"].append(name)
        for name, tool in offered_by_name.items():
            if name in existing:
                _write_tool(existing[name], server, tool)
                changes["updated"].append(name)
            elif not Tool.objects.for_org(server.organization_id).filter(name=name).exists():
                register_tool(server=server, tool=tool)
                changes["added"].append(name)
    return changes


def register_tool(*, server: MCPServer, tool: MCPTool) -> Tool:
    """Register one MCP tool as the organization's ``Tool`` (or update the one already registered)."""
    if len(tool.name) > MAX_TOOL_NAME_CHARS:
        raise InvalidArgument(
            f"Tool name {tool.name} is too long. It must be less than {MAX_TOOL_NAME_CHARS} characters."
        )
    health = health_of(tool)
    if health.status == "INVALID":
        raise InvalidArgument(f"The MCP tool {tool.name} cannot be used: {' '.join(health.reasons)}")
    row = Tool.objects.for_org(server.organization_id).filter(name=tool.name).first()
    if row is not None and (row.kind != ToolKind.MCP or _server_id_of(row) != server.public_id):
        raise Conflict(f"The organization already has a tool named {tool.name!r} from elsewhere.")
    row = row or Tool(organization_id=server.organization_id, name=tool.name, created_by=server.created_by)
    return _write_tool(row, server, tool)


def _server_id_of(tool: Tool) -> str:
    return str(((tool.metadata or {}).get("mcp") or {}).get("server_id") or "")


def _write_tool(row: Tool, server: MCPServer, tool: MCPTool) -> Tool:
    health = health_of(tool)
    asks = asks_by_default(tool)
    row.description = tool.description or ""
    row.kind = ToolKind.MCP
    row.tool_type = "external_mcp"
    row.source_type = "python"
    row.tags = [f"mcp:{server.server_name}"]
    row.default_requires_approval = asks
    row.json_schema = {
        "name": tool.name,
        "description": tool.description or "",
        "parameters": parameters_of(tool),
        "mcp:SCHEMA_STATUS": health.status,
        "mcp:SCHEMA_WARNINGS": health.reasons,
    }
    row.metadata = {
        "mcp": {
            "server_name": server.server_name,
            "server_id": server.public_id,
            "annotations": annotations_of(tool),
            **({"approval_reason": DESTRUCTIVE_REASON} if asks else {}),
        }
    }
    row.save()
    return row


def run_tool(*, server: MCPServer, tool_name: str, arguments: Mapping[str, Any]) -> tuple[bool, str]:
    """Call a tool of the server outside any agent (no variables: only template defaults resolve)."""
    result = async_to_sync(client.call_tool)(endpoint(server), tool_name, dict(arguments))
    return result_text(result)
