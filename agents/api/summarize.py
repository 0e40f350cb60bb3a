"""``POST /v1/agents/{id}/summarize``: compact the agent's context now (``agents.memory.compaction``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from asgiref.sync import async_to_sync
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.api.openapi import errors
from agents.memory.compaction import SummarizeAnswer, agent_summarize

if TYPE_CHECKING:
    from rest_framework.request import Request


class AgentSummarizeView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_messages_summarize",
        parameters=[
            OpenApiParameter(
                "max_message_length", int, description="Sent by letta-client 0.1.324; accepted and ignored."
            )
        ],
        request=inline_serializer(
            "SummarizeInput",
            {"compaction_settings": serializers.JSONField(required=False, allow_null=True)},
        ),
        responses={200: SummarizeAnswer, **errors(404, 409)},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        self.query_int("max_message_length", default=0, minimum=0, maximum=10_000_000)
        return Response(async_to_sync(agent_summarize)(agent=agent))
