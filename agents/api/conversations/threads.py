"""``/v1/conversations/{id}/…``: the turns and history of one thread.

The path id is a conversation (``conv-…``), or Letta's agent-direct mode: ``default`` with
the agent's id beside it (``agent_id`` in the query or the body, by route, as Letta takes
it) or the agent's id itself (``agent-…``), naming the agent's default thread, the rows
every agent has. Each route reuses its ``/v1/agents/{id}/…`` twin (one send path, one
resumable stream) on the thread; what differs is Letta's conversations wire: sends stream
unless ``"streaming": false``, streams with pings open with a ping naming the run, and a
busy thread is answered with Letta's conversation text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from agents.api import messages_list
from agents.api.base import Later, OrgScopedAPIView
from agents.api.errors import validation_detail
from agents.api.messages import CANCELLED_RUNS, ERRORS, LettaResponse, SendingView, blocking_response
from agents.api.openapi import errors
from agents.api.recompile import DRY_RUN
from agents.api.run_stream import run_stream
from agents.api.stream_guard import StreamGuard
from agents.api.streaming import LettaStreamEvent, sse_response
from agents.conversations import services as conversations
from agents.conversations.services import Thread
from agents.engine.inputs import TurnRequest
from agents.errors import AgentBusy, Conflict, InvalidArgument, NotFound, ValidationFailed
from agents.memory.compaction import SummarizeAnswer, agent_summarize
from agents.models import Message, Run
from agents.runs import state as run_state
from agents.runs.preview import system_prompt
from agents.runs.start import RunMode, run_start
from agents.runs.turns import preview_payload
from agents.wire.conversations import Conversation, conversation_json
from agents.wire.messages import LettaMessage, letta_messages

if TYPE_CHECKING:
    from django.http import StreamingHttpResponse
    from rest_framework.request import Request

    from agents.models import Agent
    from agents.models import Conversation as ConversationRow

CONVERSATION_BUSY = (
    "CONFLICT: Cannot send a new message: Another request (run_id={run_id}) is currently being processed "
    "for this conversation. Please wait for it to complete."
)
CONVERSATION_BUSY_UNKNOWN = (
    "CONFLICT: Cannot send a new message: Another request is currently being processed for this conversation. "
    "Please wait for the current request to complete."
)
# Fields of a conversation's send that are not the turn's: where the thread is.
THREAD_FIELDS = ("agent_id",)

AGENT_ID_QUERY = OpenApiParameter(
    "agent_id", str, description="The agent whose default thread ``default`` names (required with ``default``)."
)
CONVERSATION_TURN = inline_serializer(
    "ConversationMessageRequest",
    {
        "agent_id": serializers.CharField(required=False, help_text="The agent, when the path id is ``default``."),
        "messages": serializers.ListField(child=serializers.JSONField()),
        "streaming": serializers.BooleanField(required=False, default=True),
        "stream_tokens": serializers.BooleanField(required=False, default=False),
        "include_pings": serializers.BooleanField(required=False, default=True),
        "background": serializers.BooleanField(required=False, default=False),
    },
)
THREAD_BODY = inline_serializer(
    "ConversationThreadRequest",
    {
        "agent_id": serializers.CharField(required=False, help_text="The agent, when the path id is ``default``."),
        "compaction_settings": serializers.JSONField(required=False, allow_null=True),
    },
)


class ConversationBusy(Conflict):
    """The thread already runs a turn (Letta's ``ConversationBusyError``); its body names the run."""

    def __init__(self, run_id: str | None) -> None:
        super().__init__(CONVERSATION_BUSY.format(run_id=run_id) if run_id else CONVERSATION_BUSY_UNKNOWN)
        self.run_id = run_id


def busy_response(exc: ConversationBusy) -> Response:
    body: dict[str, Any] = {"detail": exc.detail}
    if exc.run_id:
        body["run_id"] = exc.run_id
    return Response(body, status=exc.status_code, headers={"x-should-retry": "false"})


def body_of(request: Request) -> dict[str, Any]:
    return dict(request.data) if isinstance(request.data, dict) else {}


class ThreadMixin:
    """The thread a conversation path names (``conversations.thread_get``), for the org of the caller."""

    def thread(self, conversation_id: str, agent_id: Any, *, with_tools: bool = True) -> Thread:
        view: OrgScopedAPIView = self  # type: ignore[assignment]
        return conversations.thread_get(
            organization=view.organization,
            conversation_id=conversation_id,
            agent_id=agent_id if isinstance(agent_id, str) else None,
            with_tools=with_tools,
        )


class ConversationSendingView(ThreadMixin, SendingView):
    """A send's body is a ``TurnRequest`` plus ``agent_id``, streamed with pings unless told otherwise."""

    opening_ping = True
    conversation: ConversationRow | None = None

    def turn_request(self) -> TurnRequest:
        data = body_of(self.request)
        if data.get("messages") == []:
            raise ValidationFailed("Messages must not be empty")
        turn = {key: value for key, value in data.items() if key not in THREAD_FIELDS}
        turn.setdefault("streaming", True)
        turn.setdefault("include_pings", True)
        return TurnRequest.parse(turn)

    def start_run(self, agent: Agent, turn_request: TurnRequest, mode: RunMode) -> Run:
        """``SendingView.start_run`` on this request's thread (``self.conversation``: none is the default one)."""
        try:
            return run_start(
                agent=agent,
                request=turn_request,
                mode=mode,
                user=self.acting_user,
                api_key=self.api_key,
                conversation=self.conversation,
            )
        except AgentBusy:
            busy = Run.objects.busy_with(agent.pk, self.conversation.pk if self.conversation else None)
            holder = busy.order_by("-created_at").first()
            raise ConversationBusy(holder.public_id if holder else None) from None


class ConversationMessagesView(messages_list.AgentMessagesView, ConversationSendingView):
    """``GET``: the thread's history; ``POST``: send a turn (SSE unless ``"streaming": false``)."""

    @extend_schema(
        operation_id="conversations_messages_list",
        parameters=[AGENT_ID_QUERY, *messages_list.LIST_PARAMETERS],
        responses={200: list[LettaMessage], **errors(404, 422)},
    )
    def get(self, request: Request, conversation_id: str) -> Response:
        thread = self.thread(conversation_id, self.query_str("agent_id"), with_tools=False)
        if thread.conversation is None:
            return self.history(thread.agent)
        self.query_bool("include_err")
        shown = messages_list.message_types_param(request)
        rows = conversations.conversation_messages(
            thread.conversation,
            before=self.query_str("before"),
            after=self.query_str("after"),
            limit=self.query_int("limit", default=100),
            order=self.query_choice("order", ("asc", "desc"), default="desc"),  # type: ignore[arg-type]
        )
        messages = letta_messages(rows)
        return Response(messages if shown is None else [m for m in messages if m["message_type"] in shown])

    @extend_schema(
        operation_id="conversations_messages_create",
        request=CONVERSATION_TURN,
        description=(
            "A turn on the thread: SSE by default, opening with a ping that names the run; "
            'with ``"streaming": false`` the whole turn as JSON. A thread runs one turn at a time: '
            "a second send while one runs is a 409 naming the running run."
        ),
        responses={(200, "text/event-stream"): LettaStreamEvent, (200, "application/json"): LettaResponse, **ERRORS},
    )
    def post(self, request: Request, conversation_id: str) -> StreamingHttpResponse | Later | Response:
        thread = self.thread(conversation_id, body_of(request).get("agent_id"), with_tools=False)
        agent, self.conversation = thread.agent, thread.conversation
        turn_request = self.turn_request()
        try:
            if turn_request.streaming:
                return self.stream(agent, turn_request)
            run = self.start_run(agent, turn_request, RunMode.INLINE)
        except ConversationBusy as exc:
            return busy_response(exc)

        async def respond() -> Response:
            return Response(await blocking_response(run, turn_request))

        return respond


class ConversationPreviewView(ConversationSendingView):
    @extend_schema(
        operation_id="conversations_messages_preview_raw_payload",
        request=CONVERSATION_TURN,
        description="The provider request the send would make; nothing is stored.",
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def post(self, request: Request, conversation_id: str) -> Later:
        thread = self.thread(conversation_id, body_of(request).get("agent_id"))
        turn_input = self.turn_request().turn_input()

        async def respond() -> Response:
            payload = await preview_payload(agent=thread.agent, turn_input=turn_input, conversation=thread.conversation)
            return Response(payload)

        return respond


class ConversationCancelView(ThreadMixin, OrgScopedAPIView):
    @extend_schema(
        operation_id="conversations_cancel",
        parameters=[AGENT_ID_QUERY],
        request=None,
        description="Cancel the thread's active runs; 409 when none is active.",
        responses={200: CANCELLED_RUNS, **errors(404, 409)},
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        thread = self.thread(conversation_id, self.query_str("agent_id"), with_tools=False)
        # ``default`` (or the agent's id) cancels the agent's runs in every thread, as Letta does.
        cancelled = run_state.cancel_agent_runs(agent=thread.agent, conversation=thread.conversation)
        if not cancelled:
            raise Conflict(f"CONFLICT: No active runs to cancel for conversation {conversation_id}")
        return Response({run.public_id: "cancelled" for run in cancelled})


class ConversationStreamInput(serializers.Serializer):
    agent_id = serializers.CharField(required=False, allow_null=True)
    run_id = serializers.CharField(required=False, allow_null=True)
    otid = serializers.CharField(required=False, allow_null=True)
    starting_after = serializers.IntegerField(required=False, min_value=0, allow_null=True)
    include_pings = serializers.BooleanField(required=False, allow_null=True)
    poll_interval = serializers.FloatField(required=False, allow_null=True, help_text="Accepted for compatibility.")
    batch_size = serializers.IntegerField(required=False, allow_null=True, help_text="Accepted for compatibility.")


class ConversationStreamView(ThreadMixin, OrgScopedAPIView):
    @extend_schema(
        operation_id="conversations_stream",
        request=ConversationStreamInput,
        description=(
            "Resume a run of the thread: by ``run_id``, by a message's ``otid``, else its newest active "
            "background run; from ``starting_after`` (a ``seq_id``) until the run ends."
        ),
        responses={(200, "text/event-stream"): LettaStreamEvent, **errors(400, 404, 422)},
    )
    def post(self, request: Request, conversation_id: str) -> StreamingHttpResponse:
        body = ConversationStreamInput(data=body_of(request))
        if not body.is_valid():
            raise ValidationFailed(validation_detail(body.errors))
        data = body.validated_data
        thread = self.thread(conversation_id, data.get("agent_id"), with_tools=False)
        run = self._run(thread, data)
        include_pings = data.get("include_pings") is not False

        def respond() -> StreamingHttpResponse:
            stream = run_stream(run, starting_after=data.get("starting_after") or 0, include_pings=include_pings)
            return sse_response(stream)

        return StreamGuard.respond(request, respond)

    def _run(self, thread: Thread, data: dict[str, Any]) -> Run:
        agent = thread.agent
        runs = Run.objects.for_org(self.organization).filter(agent=agent)
        if thread.conversation is not None:
            runs = runs.filter(conversation=thread.conversation)
        if run_id := data.get("run_id"):
            pk = Run.parse_public_id(run_id)
            found = runs.filter(pk=pk).first() if pk else None
            if found is None:
                raise NotFound(f"Run {run_id} not found.")
            return found
        if otid := data.get("otid"):
            rows = Message.objects.in_thread(agent.pk, thread.conversation_id)
            row = rows.filter(otid=otid, run__isnull=False).select_related("run").first()
            run: Run | None = row.run if row is not None else None
            if run is None:
                raise NotFound(f"No run found for otid={otid}. The run may have expired or never existed.")
            return run
        newest: Run | None = runs.active().order_by("-created_at").first()
        if newest is None:
            raise InvalidArgument("No active runs found for this conversation.")
        if not newest.background:
            raise InvalidArgument("Run was not created in background mode, so it cannot be retrieved.")
        return newest


class ConversationCompactView(ThreadMixin, OrgScopedAPIView):
    @extend_schema(
        operation_id="conversations_compact",
        request=THREAD_BODY,
        description="Summarize the older part of the thread's context now.",
        responses={200: SummarizeAnswer, **errors(404, 409)},
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        thread = self.thread(conversation_id, body_of(request).get("agent_id"))
        return Response(async_to_sync(agent_summarize)(agent=thread.agent, conversation=thread.conversation))


class ConversationRecompileView(ThreadMixin, OrgScopedAPIView):
    @extend_schema(
        operation_id="conversations_recompile",
        parameters=[DRY_RUN],
        request=THREAD_BODY,
        description="The thread's system prompt as the next step compiles it (a JSON string).",
        responses={200: OpenApiResponse({"type": "string"}), **errors(404)},
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        self.query_bool("dry_run")
        thread = self.thread(conversation_id, body_of(request).get("agent_id"))
        return Response(system_prompt(agent=thread.agent, conversation=thread.conversation))


class ConversationForkView(ThreadMixin, OrgScopedAPIView):
    @extend_schema(
        operation_id="conversations_fork",
        parameters=[AGENT_ID_QUERY],
        request=None,
        description=(
            "A new conversation holding copies of the thread's in-context messages behind a fresh system "
            "message; a conversation's model override comes along, its summary does not."
        ),
        responses={200: Conversation, **errors(404, 422)},
    )
    def post(self, request: Request, conversation_id: str) -> Response:
        thread = self.thread(conversation_id, self.query_str("agent_id"), with_tools=False)
        rows = list(Message.objects.in_context(thread.agent, thread.conversation))
        fork = conversations.conversation_fork(
            agent=thread.agent, source=thread.conversation, user=self.acting_user, rows=rows
        )
        return Response(conversation_json(fork))
