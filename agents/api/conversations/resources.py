"""``/v1/conversations/`` and ``/v1/conversations/{conv}``: create, list, retrieve, update, delete.

Letta 0.16.8's resource: ``agent_id`` in the query of create and list, a bare array from the
list, ``in_context_message_ids`` only from retrieve, ``null`` fields of a PATCH skipped, a
soft delete answered ``null``. Retrieve, update and delete take ``conv-<uuid4>`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from agents.api.base import OrgScopedAPIView
from agents.api.errors import validation_detail
from agents.api.openapi import errors
from agents.conversations import services
from agents.errors import ValidationFailed
from agents.models import Message
from agents.wire.conversations import Conversation, conversation_json

if TYPE_CHECKING:
    from rest_framework.request import Request

    from agents.models import Conversation as ConversationRow


class ConversationCreateInput(serializers.Serializer):
    summary = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    description = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    isolated_block_labels = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True)
    model = serializers.CharField(required=False, allow_null=True)
    model_settings = serializers.DictField(required=False, allow_null=True)


class ConversationUpdateInput(serializers.Serializer):
    summary = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    description = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    model = serializers.CharField(required=False, allow_null=True)
    model_settings = serializers.DictField(required=False, allow_null=True)
    last_message_at = serializers.DateTimeField(required=False, allow_null=True)


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    body = serializer_class(data=data if isinstance(data, dict) else {})
    if not body.is_valid():
        raise ValidationFailed(validation_detail(body.errors))
    return dict(body.validated_data)


def answer(row: ConversationRow) -> Conversation:
    return conversation_json(row, isolated_block_ids=services.isolated_block_ids(row))


class ConversationsView(OrgScopedAPIView):
    @extend_schema(
        operation_id="conversations_create",
        parameters=[OpenApiParameter("agent_id", str, required=True)],
        request=ConversationCreateInput,
        description="A new thread of the agent: its own system message only; the agent's blocks are shared.",
        responses={200: Conversation, **errors(400, 404, 422)},
    )
    def post(self, request: Request) -> Response:
        agent_id = self.query_str("agent_id")
        if agent_id is None:
            raise ValidationFailed([{"loc": ["query", "agent_id"], "msg": "Field required", "type": "missing"}])
        agent = self.get_agent(agent_id, with_tools=False)
        data = validated(ConversationCreateInput, request.data)
        row = services.conversation_create(
            agent=agent,
            user=self.acting_user,
            summary=data.get("summary"),
            description=data.get("description"),
            isolated_block_labels=data.get("isolated_block_labels") or (),
            model=data.get("model"),
            model_settings=data.get("model_settings"),
        )
        return Response(answer(row))

    @extend_schema(
        operation_id="conversations_list",
        parameters=[
            OpenApiParameter("agent_id", str, description="Omitted: every conversation of the organization."),
            OpenApiParameter("limit", int),
            OpenApiParameter("after", str),
            OpenApiParameter("summary_search", str),
            OpenApiParameter("order", str, enum=["asc", "desc"]),
            OpenApiParameter("order_by", str, enum=list(services.ORDER_BY)),
        ],
        responses={200: list[Conversation], **errors(404, 422)},
    )
    def get(self, request: Request) -> Response:
        agent_id = self.query_str("agent_id")
        rows = services.conversation_list(
            organization=self.organization,
            agent=self.get_agent(agent_id, with_tools=False) if agent_id else None,
            limit=self.query_int("limit", default=50),
            after=self.query_str("after"),
            summary_search=self.query_str("summary_search"),
            order=self.query_choice("order", ("asc", "desc"), default="desc"),  # type: ignore[arg-type]
            order_by=self.query_choice("order_by", services.ORDER_BY, default="created_at"),  # type: ignore[arg-type]
        )
        return Response([answer(row) for row in rows])


class ConversationView(OrgScopedAPIView):
    def conversation(self, conversation_id: str) -> ConversationRow:
        services.parse_conversation_id(conversation_id)
        return services.conversation_get(organization=self.organization, conversation_id=conversation_id)

    @extend_schema(operation_id="conversations_retrieve", responses={200: Conversation, **errors(404, 422)})
    def get(self, request: Request, conversation_id: str) -> Response:
        row = self.conversation(conversation_id)
        in_context = Message.objects.in_context(row.agent, row).values_list("pk", flat=True)
        return Response(
            conversation_json(
                row, isolated_block_ids=services.isolated_block_ids(row), in_context_message_ids=list(in_context)
            )
        )

    @extend_schema(
        operation_id="conversations_update",
        request=ConversationUpdateInput,
        responses={200: Conversation, **errors(400, 404, 422)},
    )
    def patch(self, request: Request, conversation_id: str) -> Response:
        row = self.conversation(conversation_id)
        changes = validated(ConversationUpdateInput, request.data)
        return Response(answer(services.conversation_update(row, user=self.acting_user, changes=changes)))

    @extend_schema(operation_id="conversations_delete", responses={200: None, **errors(404, 422)})
    def delete(self, request: Request, conversation_id: str) -> HttpResponse:
        services.conversation_delete(self.conversation(conversation_id))
        return HttpResponse(b"null", content_type="application/json")
