"""``POST /v1/agents/{id}/recompile`` (and its deprecated alias ``…/system-prompt/recompile``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.api.openapi import errors
from agents.runs.preview import system_prompt

if TYPE_CHECKING:
    from rest_framework.request import Request

DRY_RUN = OpenApiParameter("dry_run", bool, description="Accepted: the prompt is compiled on every step.")
"""Both recompile routes' ``dry_run`` (the agent's and a conversation's)."""


class AgentRecompileView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_recompile",
        parameters=[
            DRY_RUN,
            OpenApiParameter("update_timestamp", bool, description="Accepted and ignored."),
        ],
        request=None,
        description="The agent's system prompt with its memory, as the next step compiles it (a JSON string).",
        responses={200: OpenApiResponse({"type": "string"}), **errors(404, 422)},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        self.query_bool("dry_run")
        self.query_bool("update_timestamp")
        return Response(system_prompt(agent=self.get_agent(agent_id)))
