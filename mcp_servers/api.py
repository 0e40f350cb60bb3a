"""Letta's MCP routes: the 1.x id-keyed ``/v1/mcp-servers/…`` and the legacy name-keyed ``/v1/tools/mcp/servers/…``.

Views parse, call ``mcp_servers.services`` and render ``mcp_servers.wire``. Both families
read one table. Another organization's server is a 404, by id or by name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import OrganizationRequestMixin
from agents import selectors as agent_selectors
from agents.wire.tools import tool_json
from core.errors import InvalidArgument, NotFound, ValidationFailed
from mcp_servers import selectors, services
from mcp_servers.errors import MCPConnectionFailed, MCPTimeout
from mcp_servers.models import MCPServer, ServerType
from mcp_servers.schemas import mcp_tool_json
from mcp_servers.wire import legacy_config_json, server_json

if TYPE_CHECKING:
    from rest_framework.request import Request

    from accounts.models import Organization

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


class MCPServerAPIView(OrganizationRequestMixin, APIView):
    """Every MCP view: the request's organization scopes each lookup (``agents.api`` is for ``config.urls`` only)."""

    schema = None  # Letta's MCP routes are not part of this server's OpenAPI document yet

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
    def get(self, request: Request) -> Response:
        return Response([server_json(server) for server in selectors.server_list(organization=self.organization)])

    def post(self, request: Request) -> Response:
        body = _object(request.data, ["body"])
        name = _text(body, "server_name", ["body"], required=True) or ""
        config = _object(body.get("config"), ["body", "config"])
        fields = _create_fields(config, config.get("mcp_server_type"), ["body", "config"])
        server = services.server_create(organization=self.owner, user=self.acting_user, server_name=name, **fields)
        return Response(server_json(server))


class ServerDetailView(MCPServerAPIView):
    def get(self, request: Request, server_id: str) -> Response:
        return Response(server_json(self.server(server_id)))

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

    def delete(self, request: Request, server_id: str) -> HttpResponse:
        services.server_delete(server=self.server(server_id))
        return HttpResponse(status=204)


class ServerToolListView(MCPServerAPIView):
    def get(self, request: Request, server_id: str) -> Response:
        return Response([tool_json(tool) for tool in selectors.server_tools(self.server(server_id))])


class ServerToolDetailView(MCPServerAPIView):
    def get(self, request: Request, server_id: str, tool_id: str) -> Response:
        return Response(tool_json(selectors.server_tool_get(self.server(server_id), tool_id)))


class ServerToolRunView(MCPServerAPIView):
    def post(self, request: Request, server_id: str, tool_id: str) -> Response:
        server = self.server(server_id)
        tool = selectors.server_tool_get(server, tool_id)
        body = _object(request.data or {}, ["body"])
        arguments = _object(body.get("args") or {}, ["body", "args"])
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


def _connect_events(server: MCPServer) -> Iterator[str]:
    yield _event({"event": "connection_attempt", "server_name": server.server_name})
    try:
        tools = services.live_tools(server=server)
    except MCPConnectionFailed as exc:
        yield _event({"event": "error", "message": f"Connection failed: {exc.detail}"})
        return
    except MCPTimeout as exc:
        yield _event({"event": "error", "message": f"Connection failed: {exc.detail}"})
        return
    yield _event({"event": "success", "tools": [mcp_tool_json(tool) for tool in tools]})


class ServerConnectView(MCPServerAPIView):
    def get(self, request: Request, server_id: str) -> StreamingHttpResponse:
        server = self.server(server_id)
        return StreamingHttpResponse(list(_connect_events(server)), content_type="text/event-stream")


# --- legacy: /v1/tools/mcp/servers ----------------------------------------------------------------


def _legacy_fields(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    name = _text(body, "server_name", ["body"], required=True) or ""
    return name, _create_fields(body, body.get("type") or ServerType.SSE, ["body"])


class LegacyServerListView(MCPServerAPIView):
    def get(self, request: Request) -> Response:
        servers = selectors.server_list(organization=self.organization)
        return Response({server.server_name: legacy_config_json(server) for server in servers})

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
    def post(self, request: Request) -> Response:
        name, fields = _legacy_fields(_object(request.data, ["body"]))
        server = MCPServer(organization=self.organization, server_name=name, server_type=fields["server_type"])
        server.server_url = fields.get("server_url") or ""
        server.set_auth(token=fields.get("token"), custom_headers=fields.get("custom_headers"))
        tools = services.probe_tools(server=server)
        return Response({"status": "success", "tools": [mcp_tool_json(tool) for tool in tools]})


class LegacyServerConnectView(MCPServerAPIView):
    def post(self, request: Request) -> StreamingHttpResponse:
        name, fields = _legacy_fields(_object(request.data, ["body"]))
        server = MCPServer(organization=self.organization, server_name=name, server_type=fields["server_type"])
        server.server_url = fields.get("server_url") or ""
        server.set_auth(token=fields.get("token"), custom_headers=fields.get("custom_headers"))
        return StreamingHttpResponse(list(_connect_events(server)), content_type="text/event-stream")


class LegacyServerDetailView(MCPServerAPIView):
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

    def delete(self, request: Request, server_name: str) -> Response:
        services.server_delete(server=self.server_named(server_name))
        servers = selectors.server_list(organization=self.organization)
        return Response([legacy_config_json(server) for server in servers])


class LegacyServerToolsView(MCPServerAPIView):
    """``GET …/{name}/tools`` lists live; ``POST …/{name}/tools`` registers a tool named ``tools``."""

    def get(self, request: Request, server_name: str) -> Response:
        server = self.server_named(server_name)
        tools = services.live_tools(server=server, variables=self.variables_for())
        return Response([mcp_tool_json(tool) for tool in tools])

    def post(self, request: Request, server_name: str) -> Response:
        return _register(self, server_name, "tools")


def _register(view: MCPServerAPIView, server_name: str, tool_name: str) -> Response:
    server = view.server_named(server_name)
    offered = {tool.name: tool for tool in services.live_tools(server=server)}
    if tool_name not in offered:
        raise NotFound(f"MCP tool {tool_name} not found on MCP server {server_name}")
    return Response(tool_json(services.register_tool(server=server, tool=offered[tool_name])))


class LegacyToolRegisterView(MCPServerAPIView):
    def post(self, request: Request, server_name: str, tool_name: str) -> Response:
        return _register(self, server_name, tool_name)


class LegacyServerResyncView(MCPServerAPIView):
    def post(self, request: Request, server_name: str) -> Response:
        server = self.server_named(server_name)
        return Response(services.server_refresh(server=server, variables=self.variables_for()))


class LegacyToolExecuteView(MCPServerAPIView):
    def post(self, request: Request, server_name: str, tool_name: str) -> Response:
        server = self.server_named(server_name)
        body = _object(request.data or {}, ["body"])
        arguments = _object(body.get("args") or {}, ["body", "args"])
        ok, text = services.run_tool(server=server, tool_name=tool_name, arguments=arguments)
        return Response({"result": text, "success": ok})


class LegacyOAuthCallbackView(MCPServerAPIView):
    """Always 200, as Letta's: this server has no OAuth sessions to complete yet, so every state is unknown."""

    authentication_classes = ()
    permission_classes = (AllowAny,)

    def get(self, request: Request) -> JsonResponse:
        if request.query_params.get("error"):
            message = (
                f"OAuth error: {request.query_params['error']} - {request.query_params.get('error_description', '')}"
            )
        elif not request.query_params.get("state"):
            message = "Missing state parameter"
        else:
            message = "Invalid or expired state parameter"
        return JsonResponse({"status": "error", "message": message})
