"""The MCP caller the tool runner uses (``settings.TOOL_MCP_CALLER``): one call of an agent's MCP tool.

The server is found as Letta finds it: by the tool's ``mcp:<server name>`` tag, within the
call's organization only. The agent's tool variables resolve the server's ``{{VAR}}``
headers, and the call carries ``X-Agent-Id``. Every failure is a ``ToolError`` the model reads. A result
with images comes back as ``ReturnWithImages`` (the text describes each image, kept or not).

A server that asks the person for input mid-call (elicitation, form mode) gets an error at once
and the call raises ``ToolInputRequired`` with the question: the engine stops the run for approval
and, once a person answered, calls again with the answers in ``context.elicitation_replies``, which
the client gives the server when it asks those questions again (a new question asks the person
again, up to ``tools.elicitation.MAX_ROUNDS``). A question this server cannot show as a form, or a
URL-mode one, is a tool error.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from mcp_servers import client, services
from mcp_servers.errors import MCPConnectionFailed, MCPElicitationRequired, MCPTimeout, UnsafeMCPURL
from mcp_servers.models import MCPServer
from mcp_servers.results import result_content
from tools import elicitation
from tools.base import ReturnWithImages, ToolContext, ToolError, ToolInputRequired, ToolSpec
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
        result = await client.call_tool(endpoint, spec.name, arguments, replies=context.elicitation_replies)
    except MCPElicitationRequired as exc:
        raise _asked(endpoint, spec, exc) from exc
    except (MCPConnectionFailed, MCPTimeout, UnsafeMCPURL) as exc:
        raise ToolError(str(exc.detail)) from exc
    content = result_content(result)
    if not content.ok:
        raise ToolError(content.text)
    return ReturnWithImages(content.text, content.images) if content.images else content.text


def _asked(endpoint: client.Endpoint, spec: ToolSpec, exc: MCPElicitationRequired) -> ToolInputRequired | ToolError:
    """What a call the server asked a question in becomes: a question for the person, or a tool error."""
    question = exc.requests[0]
    message, schema = str(question.get("message") or ""), question.get("requested_schema")
    if schema is None:
        return ToolError(
            f"The MCP server {endpoint.name} asked the person to open a link while calling {spec.name} "
            f'("{message}"); URL elicitation is not supported, so the call did not complete.'
        )
    problem = elicitation.schema_problem(schema)
    if problem is not None:
        return ToolError(
            f'The MCP server {endpoint.name} asked for input while calling {spec.name} ("{message}"), but '
            f"{problem}, so it cannot be shown as a form; the call did not complete."
        )
    request = elicitation.request(endpoint.name, message, schema)  # type: ignore[arg-type]
    return ToolInputRequired(request, str(exc.detail))
