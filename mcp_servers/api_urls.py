"""``/v1`` routes of MCP servers, with Letta's paths (included by ``config/urls.py`` before the /v1 catch-all).

Fixed words (``connect``, ``test``) come before the routes that take a name or an id in their place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.urls import path

from mcp_servers import api

if TYPE_CHECKING:
    from django.urls import URLPattern
    from rest_framework.views import APIView

app_name = "mcp_api"


def route(canonical: str, view: type[APIView], name: str) -> list[URLPattern]:
    """``canonical`` and the same path with/without the trailing slash (as ``agents.api.urls`` does)."""
    alternate = canonical.removesuffix("/") if canonical.endswith("/") else f"{canonical}/"
    return [path(canonical, view.as_view(), name=name), path(alternate, view.as_view(schema=None))]


urlpatterns = [
    *route("mcp-servers/", api.ServerListView, "mcp-servers"),
    *route("mcp-servers/connect/<str:server_id>", api.ServerConnectView, "mcp-server-connect"),
    *route("mcp-servers/<str:server_id>", api.ServerDetailView, "mcp-server"),
    *route("mcp-servers/<str:server_id>/tools", api.ServerToolListView, "mcp-server-tools"),
    *route("mcp-servers/<str:server_id>/tools/<str:tool_id>", api.ServerToolDetailView, "mcp-server-tool"),
    *route("mcp-servers/<str:server_id>/tools/<str:tool_id>/run", api.ServerToolRunView, "mcp-server-tool-run"),
    *route("mcp-servers/<str:server_id>/refresh", api.ServerRefreshView, "mcp-server-refresh"),
    *route("tools/mcp/servers", api.LegacyServerListView, "mcp-legacy-servers"),
    *route("tools/mcp/servers/test", api.LegacyServerTestView, "mcp-legacy-test"),
    *route("tools/mcp/servers/connect", api.LegacyServerConnectView, "mcp-legacy-connect"),
    *route("tools/mcp/oauth/callback", api.LegacyOAuthCallbackView, "mcp-legacy-oauth-callback"),
    *route("tools/mcp/servers/<str:server_name>", api.LegacyServerDetailView, "mcp-legacy-server"),
    *route("tools/mcp/servers/<str:server_name>/tools", api.LegacyServerToolsView, "mcp-legacy-server-tools"),
    *route("tools/mcp/servers/<str:server_name>/resync", api.LegacyServerResyncView, "mcp-legacy-resync"),
    *route(
        "tools/mcp/servers/<str:server_name>/tools/<str:tool_name>/execute",
        api.LegacyToolExecuteView,
        "mcp-legacy-execute",
    ),
    *route("tools/mcp/servers/<str:server_name>/<str:tool_name>", api.LegacyToolRegisterView, "mcp-legacy-register"),
]
