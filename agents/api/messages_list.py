"""``GET /v1/agents/{agent_id}/messages``: the agent's history as LettaMessages, by cursor;
``GET /v1/messages/``: the organization's, the same way; ``POST /v1/messages/search``: full-text
search over them; and ``GET /v1/messages/{message_id}``: one stored row as LettaMessages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, get_args

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from typing_extensions import TypedDict

from accounts.access import get_for_org
from agents import selectors
from agents.api.base import OrgScopedAPIView
from agents.api.fields import optional, validated
from agents.api.openapi import LIMIT, errors
from agents.engine.inputs import LettaMessageType
from agents.errors import ValidationFailed
from agents.memory.recall import RecallHit, message_search
from agents.models import Agent, Conversation, Message
from agents.wire.messages import LettaMessage, letta_messages, letta_messages_for_row, row_text
from agents.wire.values import DateTime, letta_timestamp, public_id

if TYPE_CHECKING:
    from rest_framework.request import Request

LIST_PARAMETERS = [
    OpenApiParameter("after", str, description="A message id: only messages strictly newer than it."),
    OpenApiParameter("before", str, description="A message id: only messages strictly older than it."),
    OpenApiParameter("limit", LIMIT, description="At most this many stored messages (default 100)."),
    OpenApiParameter(
        "order",
        str,
        enum=["asc", "desc"],
        description="desc (default) takes the newest page, asc the oldest; either way it comes back oldest first.",
    ),
    OpenApiParameter("include_err", bool, description="Accepted for compatibility; every message is listed."),
    OpenApiParameter("use_assistant_message", bool, description="Accepted for compatibility."),
    OpenApiParameter("assistant_message_tool_name", str, description="Accepted for compatibility."),
    OpenApiParameter("assistant_message_tool_kwarg", str, description="Accepted for compatibility."),
    OpenApiParameter("group_id", str, description="Accepted for compatibility."),
    OpenApiParameter(
        "include_return_message_types",
        {"type": "array", "items": {"type": "string", "enum": list(get_args(LettaMessageType))}},
        description="Only messages of these types.",
    ),
]
MESSAGE_TYPES = frozenset(get_args(LettaMessageType))


def message_types_param(request: Request) -> frozenset[str] | None:
    """``include_return_message_types`` of the query (``None`` when absent); an unknown type is a 422."""
    given = request.query_params.getlist("include_return_message_types")
    if not given:
        return None
    unknown = [value for value in given if value not in MESSAGE_TYPES]
    if unknown:
        raise ValidationFailed(
            [
                {
                    "loc": ["query", "include_return_message_types", given.index(value)],
                    "msg": f"Input should be one of {', '.join(sorted(MESSAGE_TYPES))}",
                    "type": "literal_error",
                }
                for value in unknown
            ]
        )
    return frozenset(given)


def page_query(view: OrgScopedAPIView) -> dict[str, Any]:
    """The cursor of a message list: ``after``, ``before``, ``limit`` (rows, default 100) and ``order``."""
    return {
        "after": view.query_str("after"),
        "before": view.query_str("before"),
        "limit": view.query_int("limit", default=100),
        "order": view.query_choice("order", ("asc", "desc"), default="desc"),
    }


def shown_messages(rows: list[Message], shown: frozenset[str] | None) -> Response:
    """The rows as LettaMessages, only those of the ``shown`` types when given."""
    messages = letta_messages(rows)
    return Response(messages if shown is None else [m for m in messages if m["message_type"] in shown])


class AgentMessagesView(OrgScopedAPIView):
    """The agent's messages. ``limit`` counts stored rows; one row may show as several LettaMessages."""

    @extend_schema(
        operation_id="agents_messages_list",
        parameters=LIST_PARAMETERS,
        responses={200: list[LettaMessage], **errors(404, 422)},
    )
    def get(self, request: Request, agent_id: str) -> Response:
        return self.history(self.get_agent(agent_id))

    def history(self, agent: Agent) -> Response:
        """A page of ``agent``'s history by the query's cursor (its default thread, for conversations too)."""
        for ignored in ("include_err", "use_assistant_message"):
            self.query_bool(ignored)  # accepted for compatibility, but only as booleans (as on Letta)
        shown = message_types_param(self.request)
        return shown_messages(selectors.message_list(agent=agent, **page_query(self)), shown)


class MessageDetailView(OrgScopedAPIView):
    """One stored row, as the LettaMessages it shows as, last part first (Letta 0.16.8's order).

    Letta Code reads the agent's last in-context message this way at startup to find a tool
    call still waiting for approval (an ``approval_request_message`` among the parts).
    """

    @extend_schema(operation_id="messages_retrieve", responses={200: list[LettaMessage], **errors(404)})
    def get(self, request: Request, message_id: str) -> Response:
        row = get_for_org(Message, self.organization, message_id)
        return Response(list(reversed(letta_messages_for_row(row))))


class OrganizationMessagesView(OrgScopedAPIView):
    """Every agent's messages of the organization, by the same cursor and chronological pages as one agent's."""

    @extend_schema(
        operation_id="messages_list",
        parameters=[
            *LIST_PARAMETERS[:4],
            OpenApiParameter("conversation_id", str, description="Only the messages of this conversation."),
            LIST_PARAMETERS[-1],
        ],
        responses={200: list[LettaMessage], **errors(404, 422)},
    )
    def get(self, request: Request) -> Response:
        shown = message_types_param(request)
        conversation_id = self.query_str("conversation_id")
        rows = selectors.organization_message_list(
            organization=self.organization, conversation_id=conversation_id, **page_query(self)
        )
        return shown_messages(rows, shown)


class MessageSearchInput(serializers.Serializer):
    query = serializers.CharField(trim_whitespace=False)
    search_mode = serializers.ChoiceField(choices=["vector", "fts", "hybrid"], default="hybrid")
    agent_id = optional(serializers.CharField)
    conversation_id = optional(serializers.CharField)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=50)
    start_date = optional(serializers.DateTimeField)
    end_date = optional(serializers.DateTimeField)


class MessageSearchResult(TypedDict):
    """Letta's ``…MessageListResult``: a user or assistant message with its agent and conversation."""

    message_type: Literal["user_message", "assistant_message"]
    content: NotRequired[str]
    message_id: str
    agent_id: str | None
    conversation_id: str | None
    created_at: DateTime | None


def search_result(hit: RecallHit) -> MessageSearchResult:
    row = hit.message
    return {
        "message_type": "user_message" if row.role == "user" else "assistant_message",
        "content": row_text(row) or hit.text,
        "message_id": row.public_id,
        "agent_id": public_id("agent", row.agent_id),
        "conversation_id": public_id(Conversation.id_prefix, row.conversation_id),
        "created_at": letta_timestamp(row.created_at),
    }


class MessageSearchView(OrgScopedAPIView):
    """Full-text search over the organization's user and assistant messages (every ``search_mode`` is full text)."""

    @extend_schema(
        operation_id="messages_search",
        request=MessageSearchInput,
        responses={200: list[MessageSearchResult], **errors(404, 422)},
    )
    def post(self, request: Request) -> Response:
        data = validated(MessageSearchInput, request.data)
        agent: Agent | None = self.get_agent(data["agent_id"], with_tools=False) if data.get("agent_id") else None
        conversation = Conversation.parse_public_id(data["conversation_id"]) if data.get("conversation_id") else None
        if data.get("conversation_id") and conversation is None:
            return Response([])  # no conversation has that id
        hits = message_search(
            organization_id=self.organization.pk if self.organization else None,
            agent_id=agent.pk if agent else None,
            conversation_id=conversation,
            query=data["query"],
            limit=data["limit"],
            start=data.get("start_date"),
            end=data.get("end_date"),
        )
        return Response([search_result(hit) for hit in hits])
