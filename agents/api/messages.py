"""Sending messages: blocking, streamed (SSE), async (a background run), cancel, reset, dry run, context."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, cast

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response
from typing_extensions import TypedDict

from accounts.models import ApiKey
from agents.api import messages_list
from agents.api import serializers as s
from agents.api.base import Later, OrgScopedAPIView, OrgScopedAsyncAPIView
from agents.api.openapi import errors
from agents.api.run_stream import run_stream
from agents.api.states import agent_state_of
from agents.api.stream_guard import StreamGuard
from agents.api.streaming import LettaStreamEvent, inline_stream, sse_frame, sse_response
from agents.engine.events import MessageEvent, RunFinishedEvent
from agents.engine.inputs import TurnRequest
from agents.runs import state as run_state
from agents.runs.execute import start_inline
from agents.runs.preview import agent_reset_messages, context_overview
from agents.runs.start import AgentRef, RunMode, run_start
from agents.runs.turns import preview_payload
from agents.wire import resources as letta
from agents.wire.context import ContextWindowOverview
from agents.wire.messages import LettaMessage
from agents.wire.resources import run_json
from agents.wire.stream import LettaStopReason, LettaUsageStatistics, output_row, stop_reason_json, usage_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from django.http import StreamingHttpResponse
    from rest_framework.request import Request

    from agents.models import Agent, Run

# ``{"run-…": "cancelled"}`` for each run asked to stop.
CANCELLED_RUNS = OpenApiResponse(
    {"type": "object", "additionalProperties": {"type": "string", "enum": ["cancelled"]}},
    description="The id of each run asked to stop, mapped to ``cancelled``.",
)
ERRORS = errors(400, 404, 409, 422)


class LettaResponse(TypedDict):
    """A whole turn: its messages, why it stopped and what it used."""

    messages: list[LettaMessage]
    stop_reason: LettaStopReason
    usage: LettaUsageStatistics


def run_ping(run: Run) -> bytes:
    """The ping that opens a conversation's stream, naming its run (Letta's ``prepend_initial_run_ping``)."""
    return sse_frame(
        {
            "id": f"ping-{uuid.uuid4()}",
            "date": timezone.now().isoformat(),
            "name": None,
            "message_type": "ping",
            "otid": None,
            "sender_id": None,
            "step_id": None,
            "is_err": None,
            "seq_id": None,
            "run_id": run.public_id,
        }
    )


async def _opened(first: bytes | None, body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first is not None:
        yield first
    async for chunk in body:
        yield chunk


class SendingView(OrgScopedAsyncAPIView):
    """Shared by the views that start a turn: parse the body once, start the run through ``run_start``.

    An async view (``OrgScopedAsyncAPIView``): the checks and the run's creation happen in the
    request's thread, then the turn executes on the event loop without another round trip.
    ``opening_ping``: a stream with pings starts with one naming its run (the conversations routes).
    """

    opening_ping = False

    def _first(self, run: Run, turn_request: TurnRequest) -> bytes | None:
        return run_ping(run) if self.opening_ping and turn_request.include_pings else None

    def turn_request(self) -> TurnRequest:
        return TurnRequest.parse(self.request.data)

    def sending_agent(self, agent_id: str) -> Agent:
        """The agent to send to, without its tools and blocks: the turn reads what it needs itself."""
        return self.get_agent(agent_id, with_tools=False)

    def start_run(self, agent: Agent, turn_request: TurnRequest, mode: RunMode) -> Run:
        return run_start(agent=agent, request=turn_request, mode=mode, user=self.acting_user, api_key=self.api_key)

    @property
    def api_key(self) -> ApiKey | None:
        return self.request.auth if isinstance(self.request.auth, ApiKey) else None

    def stream(self, agent: Agent, turn_request: TurnRequest) -> StreamingHttpResponse | Later:
        """The turn as SSE, capped per caller and closed when their access ends (``StreamGuard``):
        following a background run when ``background`` is set, else executed inline on the event loop."""
        if turn_request.background:
            return StreamGuard.respond(self.request, lambda: self._background_stream(agent, turn_request))
        return StreamGuard.respond_later(self.request, lambda: self._inline_stream(agent, turn_request))

    def _background_stream(self, agent: Agent, turn_request: TurnRequest) -> StreamingHttpResponse:
        run = self.start_run(agent, turn_request, RunMode.BACKGROUND)
        body = run_stream(
            run,
            starting_after=0,
            include_pings=bool(turn_request.include_pings),
            compaction_messages=bool(turn_request.include_compaction_messages),
            message_types=turn_request.include_return_message_types,
        )
        return sse_response(_opened(self._first(run, turn_request), body))

    def _inline_stream(self, agent: Agent, turn_request: TurnRequest) -> Callable[[], Awaitable[StreamingHttpResponse]]:
        run = self.start_run(agent, turn_request, RunMode.INLINE)
        stream_tokens = bool(turn_request.stream_tokens)
        first = self._first(run, turn_request)

        async def respond() -> StreamingHttpResponse:
            execution = await start_inline(run, turn_request, stream_tokens=stream_tokens)
            events = inline_stream(
                execution,
                include_pings=bool(turn_request.include_pings),
                compaction_messages=bool(turn_request.include_compaction_messages),
                message_types=turn_request.include_return_message_types,
            )
            return sse_response(_opened(first, events))

        return respond


async def blocking_response(run: Run, turn_request: TurnRequest) -> LettaResponse:
    """Execute ``run`` inline and answer with the whole turn (Letta's ``LettaResponse``)."""
    execution = await start_inline(run, turn_request, stream_tokens=False)
    compaction_messages = bool(turn_request.include_compaction_messages)
    shown = turn_request.include_return_message_types
    messages: list[LettaMessage] = []
    seen: set[str] = set()
    finished: RunFinishedEvent | None = None
    async for event in execution.events():
        if isinstance(event, RunFinishedEvent):
            finished = event
        elif isinstance(event, MessageEvent):
            row = output_row(event.message)
            if row is not None and (compaction_messages or not row.summary):
                kept = [m for m in row.messages if shown is None or m["message_type"] in shown]
                if row.id in seen:  # a row sent again (a call came to wait for a person) replaces its first sending
                    messages = [m for m in messages if m["id"] != row.id]
                seen.add(row.id)
                messages.extend(cast("list[LettaMessage]", kept))
    assert finished is not None, "a turn always ends with run_finished"
    usage = usage_json(finished.usage, [run.public_id])
    del usage["message_type"]
    return {"messages": messages, "stop_reason": stop_reason_json(finished.stop_reason), "usage": usage}


class AgentMessagesView(messages_list.AgentMessagesView, SendingView):
    """``GET``: the history (see ``messages_list``); ``POST``: send and wait for the whole turn."""

    @extend_schema(
        operation_id="agents_messages_create",
        request=TurnRequest,
        description='The whole turn as JSON; with ``"streaming": true`` the same SSE events as ``/messages/stream``.',
        responses={
            (200, "application/json"): LettaResponse,
            (200, "text/event-stream"): LettaStreamEvent,
            **ERRORS,
        },
    )
    def post(self, request: Request, agent_id: str) -> StreamingHttpResponse | Later:
        try:
            turn_request = self.turn_request()
        except Exception:
            self.sending_agent(agent_id)  # an unknown agent is a 404 before the body's errors
            raise
        if turn_request.streaming:
            return self.stream(self.sending_agent(agent_id), turn_request)
        # The agent is read by the start's row-lock query (the same 404 when there is none).
        run = run_start(
            agent=AgentRef(organization=self.organization, public_id=agent_id),
            request=turn_request,
            mode=RunMode.INLINE,
            user=self.acting_user,
            api_key=self.api_key,
        )

        async def respond() -> Response:
            return Response(await blocking_response(run, turn_request))

        return respond


class AgentMessagesStreamView(SendingView):
    @extend_schema(
        operation_id="agents_messages_create_stream",
        request=TurnRequest,
        responses={(200, "text/event-stream"): LettaStreamEvent, **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> StreamingHttpResponse | Later:
        return self.stream(self.sending_agent(agent_id), self.turn_request())


class AgentMessagesAsyncView(SendingView):
    @extend_schema(
        operation_id="agents_messages_create_async",
        request=TurnRequest,
        responses={200: letta.Run, **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        agent = self.sending_agent(agent_id)
        return Response(run_json(self.start_run(agent, self.turn_request(), RunMode.BACKGROUND)))


class AgentMessagesCancelView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_messages_cancel",
        request=s.CancelAgentRunsInput,
        responses={200: CANCELLED_RUNS, **errors(404, 422)},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        body = s.CancelAgentRunsInput(data=request.data)
        body.is_valid(raise_exception=True)
        cancelled = run_state.cancel_agent_runs(agent=agent, run_ids=body.validated_data.get("run_ids"))
        return Response({run.public_id: "cancelled" for run in cancelled})


class AgentResetMessagesView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_messages_reset",
        parameters=[
            OpenApiParameter(
                "add_default_initial_messages", bool, description="0.1.324's form of the body field; false by default."
            )
        ],
        request=s.ResetMessagesInput,
        responses={200: letta.AgentState, **errors(404, 409)},
    )
    def patch(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        add_defaults = self.body_or_query_bool("add_default_initial_messages", default=False)
        agent = agent_reset_messages(agent=agent, add_default_initial_messages=bool(add_defaults))
        return Response(agent_state_of(agent))


class AgentPreviewPayloadView(SendingView):
    @extend_schema(
        operation_id="agents_messages_preview_raw_payload",
        request=TurnRequest,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> Later:
        agent = self.get_agent(agent_id)
        turn_input = self.turn_request().turn_input()

        async def respond() -> Response:
            return Response(await preview_payload(agent=agent, turn_input=turn_input))

        return respond


class AgentContextView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_context_retrieve", responses={200: ContextWindowOverview, **errors(404)})
    def get(self, request: Request, agent_id: str) -> Response:
        return Response(context_overview(agent=self.get_agent(agent_id)))
