"""Running a tool by hand: ``POST /v1/tools/run`` and ``POST /v1/agents/{agent_id}/tools/{tool_name}/run``.

The work is ``agents.tool_calls``'s; these views read the bodies and answer Letta 0.16.8's shapes:
a ``tool_return_message`` (ids the literal ``"null"``, as Letta writes them) for a run of source,
a ``ToolExecutionResult`` for an agent's tool. A tool that asks for approval is refused with a 403.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from typing_extensions import TypedDict

from agents import tool_calls
from agents.api.base import OrgScopedAPIView
from agents.api.fields import optional, validated
from agents.api.openapi import errors
from agents.wire.messages import ToolReturnMessage
from agents.wire.values import letta_timestamp

if TYPE_CHECKING:
    from rest_framework.request import Request

    from tools.base import ToolOutcome


class ToolRunInput(serializers.Serializer):
    source_code = serializers.CharField(trim_whitespace=False, max_length=200_000)
    args = serializers.DictField(required=False, default=dict)
    env_vars = optional(serializers.DictField, child=serializers.CharField(allow_blank=True, trim_whitespace=False))
    name = optional(serializers.CharField, max_length=64)
    source_type = optional(serializers.CharField)
    args_json_schema = optional(serializers.DictField)
    json_schema = optional(serializers.DictField)
    pip_requirements = optional(serializers.ListField)
    npm_requirements = optional(serializers.ListField)


class AgentToolRunInput(serializers.Serializer):
    args = serializers.DictField(required=False, default=dict)


class ToolExecutionResult(TypedDict):
    status: Literal["success", "error"]
    func_return: str | None
    agent_state: dict[str, Any] | None
    """Always ``null``: read the agent for its state after the run."""
    stdout: list[str] | None
    stderr: list[str] | None
    sandbox_config_fingerprint: str | None


def tool_return_message(outcome: ToolOutcome, name: str | None) -> ToolReturnMessage:
    stdout, stderr = outcome.stdout or None, outcome.stderr or None
    return {
        "id": "null",
        "date": letta_timestamp(timezone.now()) or "",
        "name": name,
        "otid": None,
        "sender_id": None,
        "step_id": None,
        "is_err": None,
        "seq_id": None,
        "run_id": None,
        "message_type": "tool_return_message",
        "tool_return": outcome.tool_return,
        "status": outcome.status,
        "tool_call_id": "null",
        "stdout": stdout,
        "stderr": stderr,
        "tool_returns": [
            {
                "type": "tool",
                "tool_call_id": "null",
                "tool_return": outcome.tool_return,
                "status": outcome.status,
                "stdout": stdout,
                "stderr": stderr,
            }
        ],
    }


class ToolRunView(OrgScopedAPIView):
    @extend_schema(
        operation_id="tools_run", request=ToolRunInput, responses={200: ToolReturnMessage, **errors(400, 422)}
    )
    def post(self, request: Request) -> Response:
        data = validated(ToolRunInput, request.data)
        assert self.organization is not None
        outcome = tool_calls.source_tool_run(
            organization=self.organization,
            source_code=data["source_code"],
            args=data["args"],
            env_vars=data.get("env_vars"),
            name=data.get("name"),
            source_type=data.get("source_type"),
            args_json_schema=data.get("args_json_schema"),
            json_schema=data.get("json_schema"),
        )
        return Response(tool_return_message(outcome, data.get("name")))


class AgentToolRunView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_tools_run",
        request=AgentToolRunInput,
        responses={200: ToolExecutionResult, **errors(403, 404, 409, 422)},
    )
    def post(self, request: Request, agent_id: str, tool_name: str) -> Response:
        agent = self.get_agent(agent_id, with_tools=False)
        args = validated(AgentToolRunInput, request.data)["args"]
        outcome = tool_calls.agent_tool_run(agent=agent, tool_name=tool_name, args=args)
        result: ToolExecutionResult = {
            "status": outcome.status,
            "func_return": outcome.tool_return if outcome.status == "success" else None,
            "agent_state": None,
            "stdout": outcome.stdout,
            "stderr": outcome.stderr,
            "sandbox_config_fingerprint": None,
        }
        return Response(result)
