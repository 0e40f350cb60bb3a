"""Letta's MCP routes: the 1.x id-keyed ``/v1/mcp-servers/…`` and the legacy name-keyed ``/v1/tools/mcp/servers/…``.

Views parse, call ``mcp_servers.services`` and render ``mcp_servers.wire``. Both families
read one table. Another organization's server is a 404, by id or by name.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import OrganizationRequestMixin
from agents import selectors as agent_selectors
from agents.wire.tools import Tool, tool_json
from core.errors import InvalidArgument, NotFound, ValidationFailed
from mcp_servers import oauth, selectors, services
from mcp_servers.errors import MCPAuthorizationRequired, MCPConnectionFailed, MCPTimeout
from mcp_servers.models import MCPServer, OAuthStatus, ServerType
from mcp_servers.schemas import mcp_tool_json
from mcp_servers.wire import (
    LegacyConfigJSON,
    LegacyRunJSON,
    LegacyTestJSON,
    MCPErrorJSON,
    MCPServerJSON,
    SyncJSON,
    ToolRunJSON,
    legacy_config_json,
    server_json,
)

if TYPE_CHECKING:
    from rest_framework.request import Request

    from accounts.models import Organization, User

HTTP_TYPES = (ServerType.STREAMABLE_HTTP, ServerType.SSE)


def _object(value: Any, loc: list[str | int]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValidationFailed([{"loc": loc, "msg": "Input should be a valid dictionary", "type": "dict_type"}])
    return value


def _text(body: dict[str, Any], name: str, loc: list[str | int], *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise ValidationFailed([{"loc": [*loc, name], "msg": "Field required", "type": "missing"}])
        return None
    if not isinstance(value, str):
        raise ValidationFailed([{"loc": [*loc, name], "msg": "Input should be a valid string", "type": "string_type"}])
    return value


def _headers(body: dict[str, Any], loc: list[str | int]) -> dict[str, str] | None:
    value = body.get("custom_headers")
    if value is None:
        return None
    headers = _object(value, [*loc, "custom_headers"])
    if not all(isinstance(v, str) for v in headers.values()):
        raise ValidationFailed(
            [{"loc": [*loc, "custom_headers"], "msg": "Header values should be strings", "type": "string_type"}]
        )
    return headers


def _token(body: dict[str, Any], loc: list[str | int]) -> str | None:
    """``auth_token`` (or the legacy SSE ``token``), unless ``custom_headers`` already holds ``auth_header``."""
    token = _text(body, "auth_token", loc) or _text(body, "token", loc)
    header = _text(body, "auth_header", loc) or "Authorization"
    if token and header in (body.get("custom_headers") or {}):
        return None
    return token


def _create_fields(config: dict[str, Any], server_type: Any, loc: list[str | int]) -> dict[str, Any]:
    if server_type not in ServerType.values:
        raise ValidationFailed(
            [
                {
                    "loc": [*loc, "mcp_server_type"],
                    "msg": "Input tag does not match any type",
                    "type": "union_tag_invalid",
                }
            ]
        )
    if server_type == ServerType.STDIO:
        return {"server_type": server_type, "stdio_config": config}
    return {
        "server_type": server_type,
        "server_url": _text(config, "server_url", loc, required=True),
        "token": _token(config, loc),
        "custom_headers": _headers(config, loc),
    }


SSE = "text/event-stream"
F = TypeVar("F", bound=Callable[..., Any])
ERROR_STATUSES = (400, 404, 408, 409, 422, 502)


def _tool_arguments(request: Request) -> dict[str, Any]:
    """The ``args`` object of a tool run's body."""
    body = _object(request.data or {}, ["body"])
    return _object(body.get("args") or {}, ["body", "args"])


def documented(
    operation_id: str, summary: str, *, tag: str, body: bool = False, status: int = 200, response: Any = None
) -> Callable[[F], F]:
    """The route in the OpenAPI document, its answer typed by ``wire`` (request bodies are Letta's free-form JSON)."""
    responses: dict[Any, Any] = {(200, SSE): OpenApiTypes.STR} if response == SSE else {status: response}
    responses.update(dict.fromkeys(ERROR_STATUSES, MCPErrorJSON))
    decorator: Callable[[F], F] = extend_schema(
        operation_id=operation_id,
        summary=summary,
        tags=[tag],
        request=OpenApiTypes.OBJECT if body else None,
        responses=responses,
    )
    return decorator


class MCPServerAPIView(OrganizationRequestMixin, APIView):
    """Every MCP view: the request's organization scopes each lookup (``agents.api`` is for ``config.urls`` only)."""

    @property
    def owner(self) -> Organization:
        """The request's organization (authentication guarantees one)."""
        organization = self.organization
        if organization is None:
            raise NotFound("MCP server not found")
        return organization

    def server(self, server_id: str) -> MCPServer:
        return selectors.server_get(organization=self.organization, server_id=server_id)

    def server_named(self, name: str) -> MCPServer:
        server = selectors.server_by_name(organization=self.organization, name=name)
        if server is None:
            raise NotFound(
                {"code": "MCPServerNotFoundError", "message": f"MCP server {name} not found", "mcp_server_name": name}
            )
        return server

    def variables_for(self) -> dict[str, str]:
        agent_id = self.query_str("agent_id")
        if not agent_id:
            return {}
        agent = agent_selectors.agent_get(organization=self.organization, agent_id=agent_id, with_tools=False)
        return {str(key): str(value) for key, value in (agent.tool_env_vars or {}).items()}


# --- 1.x: /v1/mcp-servers -------------------------------------------------------------------------


class ServerListView(MCPServerAPIView):
    @documented(
        "mcp_servers_list",
        "List the organization's MCP servers (at most 200).",
        tag="mcp-servers",
        response=list[MCPServerJSON],
    )
    def get(self, request: Request) -> Response:
        return Response([server_json(server) for server in selectors.server_list(organization=self.organization)])

    @documented(
        "mcp_servers_create",
        "Add an MCP server and register its usable tools.",
        tag="mcp-servers",
        body=True,
        response=MCPServerJSON,
    )
    def post(self, request: Request) -> Response:
        body = _object(request.data, ["body"])
        name = _text(body, "server_name", ["body"], required=True) or ""
        config = _object(body.get("config"), ["body", "config"])
        fields = _create_fields(config, config.get("mcp_server_type"), ["body", "config"])
        server = services.server_create(organization=self.owner, user=self.acting_user, server_name=name, **fields)
        return Response(server_json(server))


class ServerDetailView(MCPServerAPIView):
    @documented("mcp_servers_retrieve", "An MCP server.", tag="mcp-servers", response=MCPServerJSON)
    def get(self, request: Request, server_id: str) -> Response:
        return Response(server_json(self.server(server_id)))

    @documented(
        "mcp_servers_modify", "Change an MCP server (a field left out keeps its value).", tag="mcp-servers", body=True
    )
    def patch(self, request: Request, server_id: str) -> Response:
        server = self.server(server_id)
        body = _object(request.data, ["body"])
        config = _object(body.get("config") or {}, ["body", "config"])
        changes: dict[str, Any] = {"server_name": _text(body, "server_name", ["body"])}
        if server.server_type in HTTP_TYPES:
            changes["server_url"] = _text(config, "server_url", ["body", "config"])
            if "auth_token" in config or "token" in config:
                changes["token"] = _token(config, ["body", "config"])
            if "custom_headers" in config:
                changes["custom_headers"] = _headers(config, ["body", "config"])
        return Response(server_json(services.server_update(server=server, **changes)))

    @documented(
        "mcp_servers_delete", "Delete an MCP server, its tools and its OAuth sessions.", tag="mcp-servers", status=204
    )
    def delete(self, request: Request, server_id: str) -> HttpResponse:
        services.server_delete(server=self.server(server_id))
        return HttpResponse(status=204)


class ServerToolListView(MCPServerAPIView):
    @documented(
        "mcp_servers_tools_list",
        "The Letta tools registered from an MCP server.",
        tag="mcp-servers",
        response=list[Tool],
    )
    def get(self, request: Request, server_id: str) -> Response:
        return Response([tool_json(tool) for tool in selectors.server_tools(self.server(server_id))])


class ServerToolDetailView(MCPServerAPIView):
    @documented(
        "mcp_servers_tools_retrieve", "One tool registered from an MCP server.", tag="mcp-servers", response=Tool
    )
    def get(self, request: Request, server_id: str, tool_id: str) -> Response:
        return Response(tool_json(selectors.server_tool_get(self.server(server_id), tool_id)))


class ServerToolRunView(MCPServerAPIView):
    @documented(
        "mcp_servers_tools_run",
        "Run a tool of an MCP server outside any agent.",
        tag="mcp-servers",
        body=True,
        response=ToolRunJSON,
    )
    def post(self, request: Request, server_id: str, tool_id: str) -> Response:
        server = self.server(server_id)
        tool = selectors.server_tool_get(server, tool_id)
        arguments = _tool_arguments(request)
        try:
            ok, text = services.run_tool(server=server, tool_name=tool.name, arguments=arguments)
        except (MCPConnectionFailed, MCPTimeout) as exc:
            ok, text = False, str(exc.detail)
        return Response(
            {
                "status": "success" if ok else "error",
                "func_return": text,
                "agent_state": None,
                "stdout": None,
                "stderr": None,
                "sandbox_config_fingerprint": None,
            }
        )


class ServerRefreshView(MCPServerAPIView):
    @documented(
        "mcp_servers_refresh", "Sync the registered tools with the server's.", tag="mcp-servers", response=SyncJSON
    )
    def patch(self, request: Request, server_id: str) -> Response:
        server = self.server(server_id)
        variables = self.variables_for()
        try:
            return Response(services.server_refresh(server=server, variables=variables))
        except (MCPConnectionFailed, MCPTimeout) as exc:
            raise NotFound(
                {
                    "code": "MCPServerUnavailable",
                    "message": f"Could not connect to MCP server {server.server_name} to resync tools",
                    "error": str(exc.detail),
                }
            ) from exc


def _event(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


OAUTH_POLL_SECONDS = 0.5


async def _connect_events(
    server: MCPServer, *, oauth_for: MCPServer | None = None, user: User | None = None, redirect_uri: str = ""
) -> AsyncIterator[str]:
    """Letta's connect stream: list the tools; on a 401 from ``oauth_for``, its OAuth sequence, then the tools.

    The stream waits up to ``MCP_OAUTH_WAIT_SECONDS`` for the person to authorize at the URL it sent.
    """
    yield _event({"event": "connection_attempt", "server_name": server.server_name})
    try:
        tools = await sync_to_async(services.live_tools)(server=server)
    except MCPAuthorizationRequired as exc:
        if oauth_for is None:
            yield _event({"event": "error", "message": f"Connection failed: {exc.detail}"})
            return
        async for event in _oauth_events(oauth_for, user=user, redirect_uri=redirect_uri):
            yield event
        return
    except (MCPConnectionFailed, MCPTimeout) as exc:
        yield _event({"event": "error", "message": f"Connection failed: {exc.detail}"})
        return
    yield _event({"event": "success", "tools": [mcp_tool_json(tool) for tool in tools]})


async def _oauth_events(server: MCPServer, *, user: User | None, redirect_uri: str) -> AsyncIterator[str]:
    yield _event({"event": "oauth_required", "message": "OAuth authentication required"})
    try:
        session, url = await sync_to_async(oauth.oauth_begin)(server=server, user=user, redirect_uri=redirect_uri)
    except MCPConnectionFailed as exc:
        yield _event({"event": "error", "message": f"Failed to trigger OAuth: {exc.detail}"})
        return
    yield _event({"event": "authorization_url", "url": url, "session_id": session.public_id})
    yield _event({"event": "waiting_for_auth", "message": "Waiting for user authorization..."})
    wait = float(settings.MCP_OAUTH_WAIT_SECONDS)
    deadline = time.monotonic() + wait
    while True:
        status, error = await sync_to_async(selectors.oauth_session_status)(session.pk)
        if status == OAuthStatus.AUTHORIZED:
            break
        if status == OAuthStatus.FAILED:
            yield _event({"event": "error", "message": f"Failed to trigger OAuth: {error}"})
            return
        if time.monotonic() >= deadline:
            yield _event(
                {
                    "event": "error",
                    "message": f"Failed to trigger OAuth: the authorization was not completed within {wait:g} s. "
                    "Open the authorization URL, approve, then connect again.",
                }
            )
            return
        await asyncio.sleep(OAUTH_POLL_SECONDS)
    try:
        tools = await sync_to_async(services.live_tools)(server=server)
    except (MCPConnectionFailed, MCPTimeout) as exc:
        yield _event({"event": "error", "message": f"Connection failed: {exc.detail}"})
        return
    yield _event({"event": "success", "tools": [mcp_tool_json(tool) for tool in tools]})


def _api_redirect_uri(request: Request) -> str:
    return request.build_absolute_uri(reverse("mcp_api:mcp-legacy-oauth-callback"))


class ServerConnectView(MCPServerAPIView):
    @documented(
        "mcp_servers_connect", "Connect (SSE stream): the tools, or Letta's OAuth sequence on a 401.", tag="mcp-servers"
    )
    def get(self, request: Request, server_id: str) -> StreamingHttpResponse:
        server = self.server(server_id)
        events = _connect_events(
            server, oauth_for=server, user=self.acting_user, redirect_uri=_api_redirect_uri(request)
        )
        return StreamingHttpResponse(events, content_type="text/event-stream")


# --- legacy: /v1/tools/mcp/servers ----------------------------------------------------------------


def _legacy_fields(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    name = _text(body, "server_name", ["body"], required=True) or ""
    return name, _create_fields(body, body.get("type") or ServerType.SSE, ["body"])


def _unsaved_server(view: MCPServerAPIView, request: Request) -> MCPServer:
    """The server a legacy config body describes, not saved (to test it, or connect before adding it)."""
    name, fields = _legacy_fields(_object(request.data, ["body"]))
    server = MCPServer(organization=view.organization, server_name=name, server_type=fields["server_type"])
    server.server_url = fields.get("server_url") or ""
    server.set_auth(token=fields.get("token"), custom_headers=fields.get("custom_headers"))
    return server


class LegacyServerListView(MCPServerAPIView):
    @documented(
        "tools_mcp_servers_list",
        "MCP server configs keyed by server name.",
        tag="tools",
        response=dict[str, LegacyConfigJSON],
    )
    def get(self, request: Request) -> Response:
        servers = selectors.server_list(organization=self.organization)
        return Response({server.server_name: legacy_config_json(server) for server in servers})

    @documented(
        "tools_mcp_servers_add",
        "Add an MCP server; every config.",
        tag="tools",
        body=True,
        response=list[LegacyConfigJSON],
    )
    def put(self, request: Request) -> Response:
        name, fields = _legacy_fields(_object(request.data, ["body"]))
        if fields["server_type"] == ServerType.STDIO:
            raise InvalidArgument(
                "stdio is not supported in the current environment, please use a self-hosted Letta server "
                "in order to add a stdio MCP server"
            )
        services.server_create(organization=self.owner, user=self.acting_user, server_name=name, **fields)
        servers = selectors.server_list(organization=self.organization)
        return Response([legacy_config_json(server) for server in servers])


class LegacyServerTestView(MCPServerAPIView):
    @documented(
        "tools_mcp_servers_test",
        "List the tools of a config without adding it.",
        tag="tools",
        body=True,
        response=LegacyTestJSON,
    )
    def post(self, request: Request) -> Response:
        server = _unsaved_server(self, request)
        tools = services.probe_tools(server=server)
        return Response({"status": "success", "tools": [mcp_tool_json(tool) for tool in tools]})


class LegacyServerConnectView(MCPServerAPIView):
    @documented("tools_mcp_servers_connect", "Connect a config (SSE stream).", tag="tools", body=True, response=SSE)
    def post(self, request: Request) -> StreamingHttpResponse:
        server = _unsaved_server(self, request)
        saved = selectors.server_by_url(organization=self.organization, url=server.server_url)
        events = _connect_events(
            server, oauth_for=saved, user=self.acting_user, redirect_uri=_api_redirect_uri(request)
        )
        return StreamingHttpResponse(events, content_type="text/event-stream")


class LegacyServerDetailView(MCPServerAPIView):
    @documented(
        "tools_mcp_servers_modify", "Change an MCP server by name.", tag="tools", body=True, response=LegacyConfigJSON
    )
    def patch(self, request: Request, server_name: str) -> Response:
        server = self.server_named(server_name)
        body = _object(request.data, ["body"])
        changes: dict[str, Any] = {
            "server_name": _text(body, "server_name", ["body"]),
            "server_url": _text(body, "server_url", ["body"]),
        }
        if "auth_token" in body or "token" in body:
            changes["token"] = _token(body, ["body"])
        if "custom_headers" in body:
            changes["custom_headers"] = _headers(body, ["body"])
        return Response(legacy_config_json(services.server_update(server=server, **changes)))

    @documented(
        "tools_mcp_servers_delete",
        "Delete an MCP server by name; the remaining configs.",
        tag="tools",
        response=list[LegacyConfigJSON],
    )
    def delete(self, request: Request, server_name: str) -> Response:
        services.server_delete(server=self.server_named(server_name))
        servers = selectors.server_list(organization=self.organization)
        return Response([legacy_config_json(server) for server in servers])


class LegacyServerToolsView(MCPServerAPIView):
    """``GET …/{name}/tools`` lists live; ``POST …/{name}/tools`` registers a tool named ``tools``."""

    @documented(
        "tools_mcp_servers_tools_list", "The server's tools, listed live, with their schema health.", tag="tools"
    )
    def get(self, request: Request, server_name: str) -> Response:
        server = self.server_named(server_name)
        tools = services.live_tools(server=server, variables=self.variables_for())
        return Response([mcp_tool_json(tool) for tool in tools])

    @documented(
        "tools_mcp_servers_tools_register_tools", "Register the server's tool named tools.", tag="tools", response=Tool
    )
    def post(self, request: Request, server_name: str) -> Response:
        return _register(self, server_name, "tools")


def _register(view: MCPServerAPIView, server_name: str, tool_name: str) -> Response:
    server = view.server_named(server_name)
    offered = {tool.name: tool for tool in services.live_tools(server=server)}
    if tool_name not in offered:
        raise NotFound(f"MCP tool {tool_name} not found on MCP server {server_name}")
    return Response(tool_json(services.register_tool(server=server, tool=offered[tool_name])))


class LegacyToolRegisterView(MCPServerAPIView):
    @documented(
        "tools_mcp_servers_tools_register", "Register one MCP tool as a Letta tool.", tag="tools", response=Tool
    )
    def post(self, request: Request, server_name: str, tool_name: str) -> Response:
        return _register(self, server_name, tool_name)


class LegacyServerResyncView(MCPServerAPIView):
    @documented(
        "tools_mcp_servers_resync", "Sync the registered tools with the server's.", tag="tools", response=SyncJSON
    )
    def post(self, request: Request, server_name: str) -> Response:
        server = self.server_named(server_name)
        return Response(services.server_refresh(server=server, variables=self.variables_for()))


class LegacyToolExecuteView(MCPServerAPIView):
    @documented(
        "tools_mcp_servers_tools_execute",
        "Run a tool of an MCP server by name.",
        tag="tools",
        body=True,
        response=LegacyRunJSON,
    )
    def post(self, request: Request, server_name: str, tool_name: str) -> Response:
        server = self.server_named(server_name)
        arguments = _tool_arguments(request)
        ok, text = services.run_tool(server=server, tool_name=tool_name, arguments=arguments)
        return Response({"result": text, "success": ok})


class LegacyOAuthCallbackView(MCPServerAPIView):
    """Always 200, as Letta's: the ``state`` names the pending session, which the code completes."""

    authentication_classes = ()
    permission_classes = (AllowAny,)

    @documented(
        "tools_mcp_oauth_callback", "Where the authorization server sends the person back (always 200).", tag="tools"
    )
    def get(self, request: Request) -> JsonResponse:
        params = request.query_params
        session = oauth.pending_session(params.get("state", ""))
        if not params.get("state"):
            return _callback_error("Missing state parameter")
        if session is None:
            return _callback_error("Invalid or expired state parameter")
        if params.get("error"):
            message = f"OAuth error: {params['error']} - {params.get('error_description', '')}"
            oauth.oauth_fail(session=session, error=message)
            return _callback_error(message)
        if not params.get("code"):
            return _callback_error("Missing authorization code")
        try:
            services.server_oauth_connected(session=session, code=params["code"])
        except (MCPConnectionFailed, MCPTimeout) as exc:
            return _callback_error(f"Failed to complete authorization: {exc.detail}")
        return JsonResponse(
            {"status": "success", "message": "Authorization successful", "server_url": session.server.server_url}
        )


def _callback_error(message: str) -> JsonResponse:
    return JsonResponse({"status": "error", "message": message})
