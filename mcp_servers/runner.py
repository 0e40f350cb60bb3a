"""The MCP caller the tool runner uses (``settings.TOOL_MCP_CALLER``): one call of an agent's MCP tool.

The server is found as Letta finds it: by the tool's ``mcp:<server name>`` tag, within the
call's organization only. The agent's tool variables resolve the server's ``{{VAR}}``
headers, and the call carries ``X-Agent-Id``. Every failure is a ``ToolError`` the model reads. A result
with images comes back as ``ReturnWithImages`` (the text describes each image, kept or not).
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from mcp_servers import client, services
from mcp_servers.errors import MCPConnectionFailed, MCPTimeout, UnsafeMCPURL
from mcp_servers.models import MCPServer
from mcp_servers.results import result_content
from tools.base import ReturnWithImages, ToolContext, ToolError, ToolSpec
from tools.models import Tool

AGENT_ID_PREFIX = "agent"


def _endpoint_for(spec: ToolSpec, context: ToolContext) -> client.Endpoint | None:
    server = _server_for(spec, context)
    if server is None:
        return None
    agent_id = f"{AGENT_ID_PREFIX}-{context.agent_id}"
    return services.endpoint(server, variables=context.env_vars, agent_id=agent_id)


def _server_for(spec: ToolSpec, context: ToolContext) -> MCPServer | None:
    pk = Tool.parse_public_id(spec.tool_id)
    tool = Tool.objects.for_org(context.organization_id).filter(pk=pk).first() if pk else None
    if tool is None:
        return None
    names = [tag.removeprefix("mcp:") for tag in tool.tags or [] if isinstance(tag, str) and tag.startswith("mcp:")]
    return MCPServer.objects.for_org(context.organization_id).filter(server_name__in=names).first()


async def call_mcp_tool(spec: ToolSpec, arguments: dict[str, Any], context: ToolContext) -> str | ReturnWithImages:
    endpoint = await sync_to_async(_endpoint_for)(spec, context)
    if endpoint is None:
        raise ToolError(f"The MCP server of {spec.name} is not registered in this organization.")
    try:
        result = await client.call_tool(endpoint, spec.name, arguments)
    except (MCPConnectionFailed, MCPTimeout, UnsafeMCPURL) as exc:
        raise ToolError(str(exc.detail)) from exc
    content = result_content(result)
    if not content.ok:
        raise ToolError(content.text)
    return ReturnWithImages(content.text, content.images) if content.images else content.text
