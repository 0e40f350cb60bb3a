"""Sending messages: blocking, streamed (SSE), async (a background run), cancel, reset, dry run, context."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from agents import runs
from agents.api import messages_list
from agents.api import serializers as s
from agents.api.base import OrgScopedAPIView
from agents.api.runs import run_stream_response
from agents.api.streaming import (
    LettaStreamEncoder,
    keep_alive,
    sse_frame,
    sse_response,
    stop_reason_json,
    usage_json,
)
from agents.context import agent_reset_messages, context_overview
from agents.errors import ApplicationError
from agents.turns import check_input, open_turn, preview_payload
from agents.wire import agent_state, run_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from django.http import StreamingHttpResponse
    from rest_framework.request import Request

    from agents.engine.loop import Turn
    from agents.models import Agent, Run

# ``{"run-…": "cancelled"}`` for each run asked to stop.
CANCELLED_RUNS = OpenApiResponse(
    {"type": "object", "additionalProperties": {"type": "string", "enum": ["cancelled"]}},
    description="The id of each run asked to stop, mapped to ``cancelled``.",
)
ERRORS = {400: s.ErrorOutput, 404: s.ErrorOutput, 409: s.ErrorOutput, 422: s.ErrorOutput}


class SendingView(OrgScopedAPIView):
    """Shared by the views that start a turn: parse the body, create the run, open the turn."""

    def start(self, agent: Agent, *, stream_tokens: bool) -> Turn:
        data = self.request.data
        turn_input = runs.parse_turn_input(data)
        max_steps = runs.parse_max_steps(data)
        run = runs.run_create(agent=agent, request=dict(data), created_by=self.acting_user, api_key=self.api_key)
        try:
            return async_to_sync(open_turn)(
                agent=agent,
                run=run,
                turn_input=turn_input,
                stream_tokens=stream_tokens,
                sender_user=self.acting_user,
                api_key=self.api_key,
                max_steps=max_steps,
            )
        except ApplicationError:
            run.delete()  # refused before it started: nothing to keep
            raise

    def queue(self, agent: Agent) -> Run:
        """Create a background run for this request and hand it to a worker; errors are raised now."""
        data = self.request.data
        turn_input = runs.parse_turn_input(data)
        runs.parse_max_steps(data)
        check_input(agent=agent, turn_input=turn_input)
        run = runs.run_create(
            agent=agent,
            request={**data, "stream_tokens": True},
            background=True,
            created_by=self.acting_user,
            api_key=self.api_key,
        )
        runs.run_dispatch(run=run)
        return run

    @property
    def api_key(self) -> Any:
        from accounts.models import ApiKey

        return self.request.auth if isinstance(self.request.auth, ApiKey) else None


async def collect_response(turn: Turn) -> dict[str, Any]:
    encoder = LettaStreamEncoder(stream_tokens=False)
    messages: list[dict[str, Any]] = []
    stop_reason, usage = None, None
    async for event in turn.events():
        if event.type == "run_finished":
            stop_reason, usage = stop_reason_json(event.stop_reason), usage_json(event.usage)  # type: ignore[union-attr]
            continue
        messages.extend(encoder.encode(event))
    assert usage is not None
    usage = {k: v for k, v in usage.items() if k != "message_type"} | {"run_ids": [f"run-{turn.run_id}"]}
    return {"messages": messages, "stop_reason": stop_reason, "usage": usage}


class AgentMessagesView(messages_list.AgentMessagesView, SendingView):
    """``GET``: the history (see ``messages_list``); ``POST``: send and wait for the whole turn."""

    @extend_schema(
        operation_id="agents_messages_create",
        request=s.LettaRequestInput,
        responses={200: s.LettaResponseOutput, **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        turn = self.start(agent, stream_tokens=False)
        return Response(async_to_sync(collect_response)(turn))


async def _pump(turn: Turn, queue: asyncio.Queue[Any]) -> None:
    """Run the whole turn whatever happens to the client, so nothing persisted is lost and the lock is freed."""
    try:
        async for event in turn.events():
            await queue.put(event)
    finally:
        await queue.put(None)


async def sse_events(turn: Turn, *, stream_tokens: bool, include_pings: bool) -> AsyncIterator[bytes]:
    encoder = LettaStreamEncoder(stream_tokens=stream_tokens)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    runs.run_in_background(_pump(turn, queue))
    while True:
        try:
            event = await asyncio.wait_for(queue.get(), timeout=settings.SSE_KEEPALIVE_SECONDS)
        except TimeoutError:
            yield keep_alive(include_pings=include_pings)
            continue
        if event is None:
            break
        for chunk in encoder.encode(event):
            yield sse_frame(chunk)
    yield sse_frame("[DONE]")


class AgentMessagesStreamView(SendingView):
    @extend_schema(
        operation_id="agents_messages_create_stream",
        request=s.LettaStreamingRequestInput,
        responses={(200, "text/event-stream"): s.LettaStreamEventOutput, **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> StreamingHttpResponse:
        agent = self.get_agent(agent_id)
        stream_tokens = runs.parse_flag(request.data, "stream_tokens")
        include_pings = runs.parse_flag(request.data, "include_pings")
        if runs.parse_flag(request.data, "background"):
            run = self.queue(agent)
            return run_stream_response(run, include_pings=include_pings)
        turn = self.start(agent, stream_tokens=stream_tokens)
        return sse_response(sse_events(turn, stream_tokens=stream_tokens, include_pings=include_pings))


class AgentMessagesAsyncView(SendingView):
    @extend_schema(
        operation_id="agents_messages_create_async",
        request=s.LettaRequestInput,
        responses={200: s.RunOutput, **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        return Response(run_json(self.queue(self.get_agent(agent_id))))


class AgentMessagesCancelView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_messages_cancel",
        request=s.CancelAgentRunsInput,
        responses={200: CANCELLED_RUNS, 404: s.ErrorOutput, 422: s.ErrorOutput},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        body = s.CancelAgentRunsInput(data=request.data)
        body.is_valid(raise_exception=True)
        cancelled = runs.agent_cancel_runs(agent=agent, run_ids=body.validated_data.get("run_ids"))
        return Response({run.public_id: "cancelled" for run in cancelled})


class AgentResetMessagesView(OrgScopedAPIView):
    @extend_schema(
        operation_id="agents_messages_reset",
        parameters=[OpenApiParameter("add_default_initial_messages", bool)],
        request=None,
        responses={200: s.AgentStateOutput, 404: s.ErrorOutput, 409: s.ErrorOutput},
    )
    def patch(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        add_defaults = self.query_bool("add_default_initial_messages", default=True)
        agent = agent_reset_messages(agent=agent, add_default_initial_messages=bool(add_defaults))
        return Response(agent_state(agent))


class AgentPreviewPayloadView(SendingView):
    @extend_schema(
        operation_id="agents_messages_preview_raw_payload",
        request=s.LettaRequestInput,
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def post(self, request: Request, agent_id: str) -> Response:
        agent = self.get_agent(agent_id)
        turn_input = runs.parse_turn_input(request.data)
        return Response(async_to_sync(preview_payload)(agent=agent, turn_input=turn_input))


class AgentContextView(OrgScopedAPIView):
    @extend_schema(operation_id="agents_context_retrieve", responses={200: s.ContextWindowOutput, 404: s.ErrorOutput})
    def get(self, request: Request, agent_id: str) -> Response:
        return Response(context_overview(agent=self.get_agent(agent_id)))
