"""Reads of MCP servers, always scoped to one organization: another organization's server is a 404."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from mcp_servers.errors import MCPServerNotFound
from mcp_servers.models import MCPOAuthSession, MCPServer, OAuthStatus
from tools.models import Tool, ToolKind

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from accounts.models import Organization
    from accounts.scoping import OrgScopedQuerySet

LIST_LIMIT = 200


def server_list(*, organization: Organization | None) -> QuerySet[MCPServer]:
    return MCPServer.objects.for_org(organization).order_by("server_name")[:LIST_LIMIT]


def server_get(*, organization: Organization | None, server_id: str) -> MCPServer:
    server: MCPServer = MCPServer.objects.for_org(organization).get_public(
        server_id, missing=f"MCP server {server_id} not found", error=MCPServerNotFound
    )
    return server


def server_by_name(*, organization: Organization | None, name: str) -> MCPServer | None:
    return MCPServer.objects.for_org(organization).filter(server_name=name).first()


def server_tools(server: MCPServer) -> OrgScopedQuerySet:
    """The Letta tools registered from ``server``."""
    return (
        Tool.objects.for_org(server.organization_id)
        .filter(kind=ToolKind.MCP, metadata__mcp__server_id=server.public_id)
        .order_by("name")
    )


def server_tool_get(server: MCPServer, tool_id: str) -> Tool:
    tool: Tool = server_tools(server).get_public(
        tool_id, missing=f"Tool {tool_id} not found on MCP server {server.server_name}", error=MCPServerNotFound
    )
    return tool


def server_by_url(*, organization: Organization | None, url: str) -> MCPServer | None:
    return MCPServer.objects.for_org(organization).filter(server_url=url).first()


def oauth_session_status(session_id: uuid.UUID) -> tuple[str, str]:
    """``(status, error)`` of an OAuth session, read fresh (the connect stream polls it)."""
    row = MCPOAuthSession.objects.filter(pk=session_id).values_list("status", "error").first()
    return (str(row[0]), str(row[1])) if row else (OAuthStatus.FAILED, "The OAuth session is gone.")
