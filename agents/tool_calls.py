"""Running a tool by hand: ``POST /v1/tools/run`` (source code, nothing stored) and
``POST /v1/agents/{id}/tools/{name}/run`` (an attached tool, as the agent's model would call it).

Both go through the engine's runner (``tools.runtime.DefaultToolRunner``): arguments are checked
against the tool's parameters, source runs only in the sandbox under the ``TOOL_SANDBOX_*``
limits, built-ins and MCP tools run as in a turn. An agent's tool runs with the agent's tool
variables, and its memory tools really change memory. A tool whose policy asks a person first
(``ask``, or ``ask_when`` with a condition these arguments meet) is refused here: this route
has no one to approve it, so it must not become a way around the approval.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from django.db import transaction

from agents.errors import ApplicationError, Conflict, InvalidArgument, NotFound
from tools.base import StaleWrite, ToolContext, ToolOutcome, ToolSpec
from tools.conditions import condition_holds
from tools.models import AgentTool
from tools.runtime import DefaultToolRunner, tool_spec_for
from tools.schema import ToolSourceError, derive_tool_schema

if TYPE_CHECKING:
    from accounts.models import Organization
    from agents.models import Agent

NO_AGENT = uuid.UUID(int=0)
"""``ToolContext.agent_id`` of a run of bare source: no agent is involved (source tools never read it)."""


class ApprovalRequired(ApplicationError):
    """The tool's policy asks a person before each (or this) call; running it by hand would skip that."""

    status_code = 403


def _needs_approval(spec: ToolSpec, args: dict[str, Any]) -> bool:
    if spec.requires_approval:
        return True
    if not spec.approval_condition:
        return False
    try:
        return condition_holds(spec.approval_condition, args)
    except Exception:  # a condition that cannot be evaluated on these arguments gates, as in doubt
        return True


def agent_tool_run(*, agent: Agent, tool_name: str, args: dict[str, Any]) -> ToolOutcome:
    """Run the agent's attached tool ``tool_name`` with ``args``, and commit what a built-in changes."""
    link = AgentTool.objects.filter(agent=agent, tool__name=tool_name).select_related("tool").first()
    if link is None:
        raise NotFound(f"Tool '{tool_name}' not found or not attached to agent '{agent.public_id}'")
    spec = tool_spec_for(link)
    if _needs_approval(spec, args):
        raise ApprovalRequired(
            f"Tool '{tool_name}' requires approval before it runs for agent '{agent.public_id}'; "
            "it is not run by hand. Send the agent a message and approve the call, or change the tool's approval."
        )
    context = ToolContext(
        organization_id=agent.organization_id,
        agent_id=agent.pk,
        env_vars={str(k): str(v) for k, v in (agent.tool_env_vars or {}).items()},
    )
    outcome = async_to_sync(DefaultToolRunner().run)(spec, json.dumps(args), context)
    if outcome.write is not None and outcome.status == "success":
        try:
            with transaction.atomic():
                outcome.write(None)
        except StaleWrite:
            raise Conflict(f"What {tool_name} changes changed meanwhile; run it again.") from None
    return outcome


def source_tool_run(
    *,
    organization: Organization,
    source_code: str,
    args: dict[str, Any],
    env_vars: dict[str, str] | None = None,
    name: str | None = None,
    source_type: str | None = None,
    args_json_schema: dict[str, Any] | None = None,
    json_schema: dict[str, Any] | None = None,
) -> ToolOutcome:
    """Run the one public function of ``source_code`` (or the one named ``name``) in the sandbox; nothing is stored."""
    if source_type not in (None, "", "python"):
        raise InvalidArgument(f"Only Python tools run on this server, not {source_type!r}", field="source_type")
    try:
        schema = derive_tool_schema(source_code, function_name=name)
    except ToolSourceError as exc:
        raise InvalidArgument(f"The tool's source code does not parse: {exc}", field="source_code") from None
    parameters = args_json_schema or (json_schema or {}).get("parameters")
    if isinstance(parameters, dict):
        schema["parameters"] = parameters
    spec = ToolSpec(name=str(schema["name"]), kind="source", json_schema=schema, source_code=source_code)
    context = ToolContext(organization_id=organization.pk, agent_id=NO_AGENT, env_vars=dict(env_vars or {}))
    return async_to_sync(DefaultToolRunner().run)(spec, json.dumps(args), context)
