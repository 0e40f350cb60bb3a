"""``/v1/runs`` and ``/v1/steps``: a run's record, messages, steps, usage, cancel, and its resumable stream."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from accounts.access import get_for_org
from agents import runs
from agents.api import serializers as s
from agents.api.base import OrgScopedAPIView
from agents.api.openapi import LIMIT
from agents.api.streaming import INPUT_ROLES, keep_alive, sse_frame, sse_response, stop_reason_json, usage_json
from agents.engine.events import TurnUsage
from agents.errors import NotFound, ValidationFailed
from agents.models import Agent, Message, Run, RunStatus, Step
from agents.wire import letta_messages, letta_messages_for_row, run_json, step_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from django.http import StreamingHttpResponse
    from rest_framework.request import Request

FINISHED = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}
MAX_STREAM_SECONDS = 3600


def run_usage(run: Run) -> TurnUsage:
    return TurnUsage(
        prompt_tokens=run.prompt_tokens,
        completion_tokens=run.completion_tokens,
        total_tokens=run.total_tokens,
        step_count=run.step_count,
    )


class RunListView(OrgScopedAPIView):
    active_only = False

    @extend_schema(
        operation_id="runs_list",
        parameters=[
            OpenApiParameter("agent_id", str),
            OpenApiParameter("agent_ids", str, many=True),
            OpenApiParameter("background", bool),
            OpenApiParameter("stop_reason", str),
            OpenApiParameter("active", bool),
            OpenApiParameter("after", str),
            OpenApiParameter("before", str),
            OpenApiParameter("limit", LIMIT),
            OpenApiParameter("ascending", bool),
        ],
        responses={200: s.RunOutput(many=True), 404: s.ErrorOutput, 422: s.ErrorOutput},
    )
    def get(self, request: Request) -> Response:
        queryset = Run.objects.for_org(self.organization)
        agent_ids = [*self.query_list("agent_ids"), *filter(None, [self.query_str("agent_id")])]
        if agent_ids:
            queryset = queryset.filter(agent_id__in=[Agent.parse_public_id(a) for a in agent_ids])
        background = self.query_bool("background")
        if background is not None:
            queryset = queryset.filter(background=background)
        if self.query_str("stop_reason"):
            queryset = queryset.filter(stop_reason=self.query_str("stop_reason"))
        if self.active_only or self.query_bool("active"):
            queryset = queryset.active()
        ascending = bool(self.query_bool("ascending", default=False))
        queryset = queryset.order_by("created_at" if ascending else "-created_at", "id")
        for cursor, forward in (("after", True), ("before", False)):
            value = self.query_str(cursor)
            if value:
                anchor = get_for_org(Run, self.organization, value)
                newer = forward == ascending
                lookup = "created_at__gt" if newer else "created_at__lt"
                queryset = queryset.filter(**{lookup: anchor.created_at})
        limit = self.query_int("limit", default=50)
        return Response([run_json(run) for run in queryset[:limit]])


class ActiveRunListView(RunListView):
    active_only = True

    @extend_schema(operation_id="runs_list_active", responses={200: s.RunOutput(many=True)})
    def get(self, request: Request) -> Response:
        return super().get(request)


class RunDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="runs_retrieve", responses={200: s.RunOutput, 404: s.ErrorOutput})
    def get(self, request: Request, run_id: str) -> Response:
        return Response(run_json(get_for_org(Run, self.organization, run_id)))

    @extend_schema(operation_id="runs_delete", responses={200: s.RunOutput, 404: s.ErrorOutput})
    def delete(self, request: Request, run_id: str) -> Response:
        run = runs.run_cancel(run=get_for_org(Run, self.organization, run_id))
        body = run_json(run)
        run.delete()
        return Response(body)


class RunCancelView(OrgScopedAPIView):
    @extend_schema(operation_id="runs_cancel", request=None, responses={200: s.RunOutput, 404: s.ErrorOutput})
    def post(self, request: Request, run_id: str) -> Response:
        return Response(run_json(runs.run_cancel(run=get_for_org(Run, self.organization, run_id))))


class RunMessagesView(OrgScopedAPIView):
    @extend_schema(
        operation_id="runs_messages_list",
        parameters=[
            OpenApiParameter("after", str, description="A message id of this run: only what follows that row."),
            OpenApiParameter("before", str, description="A message id of this run: only what precedes that row."),
            OpenApiParameter("limit", LIMIT),
            OpenApiParameter("order", str, enum=["asc", "desc"]),
        ],
        responses={200: s.LettaMessageOutput(many=True), 404: s.ErrorOutput},
    )
    def get(self, request: Request, run_id: str) -> Response:
        run = get_for_org(Run, self.organization, run_id)
        rows = Message.objects.for_org(self.organization).filter(run=run).order_by("seq")
        for cursor, lookup in (("after", "seq__gt"), ("before", "seq__lt")):
            if self.query_str(cursor):
                anchor = get_for_org(Message, self.organization, self.query_str(cursor))
                if anchor.run_id != run.pk:
                    raise NotFound(f"Message {self.query_str(cursor)} is not part of run {run.public_id}")
                rows = rows.filter(**{lookup: anchor.seq})
        order = self.query_choice("order", ("asc", "desc"), default="asc")
        limit = self.query_int("limit", default=100)
        messages = letta_messages(rows)
        messages = messages[:limit] if order == "asc" else list(reversed(messages))[:limit]
        return Response(messages)


class RunStepsView(OrgScopedAPIView):
    @extend_schema(
        operation_id="runs_steps_list",
        parameters=[OpenApiParameter("limit", LIMIT), OpenApiParameter("order", str, enum=["asc", "desc"])],
        responses={200: s.StepOutput(many=True), 404: s.ErrorOutput},
    )
    def get(self, request: Request, run_id: str) -> Response:
        run = get_for_org(Run, self.organization, run_id)
        order = self.query_choice("order", ("asc", "desc"), default="asc")
        steps = (
            Step.objects.for_org(self.organization).filter(run=run).order_by("number" if order == "asc" else "-number")
        )
        return Response([step_json(step) for step in steps[: self.query_int("limit", default=100)]])


class RunUsageView(OrgScopedAPIView):
    @extend_schema(operation_id="runs_usage_retrieve", responses={200: s.RunUsageOutput, 404: s.ErrorOutput})
    def get(self, request: Request, run_id: str) -> Response:
        run = get_for_org(Run, self.organization, run_id)
        return Response(
            {
                "completion_tokens": run.completion_tokens,
                "prompt_tokens": run.prompt_tokens,
                "total_tokens": run.total_tokens,
                "step_count": run.step_count,
            }
        )


def _stream_snapshot(run_pk: Any) -> tuple[Run, list[dict[str, Any]]]:
    run = Run.objects.get(pk=run_pk)
    rows = Message.objects.for_org(run.organization_id).filter(run=run).exclude(role__in=INPUT_ROLES).order_by("seq")
    return run, [message for row in rows for message in letta_messages_for_row(row)]


async def run_stream(
    run: Run, *, starting_after: int, include_pings: bool, poll_interval: float
) -> AsyncIterator[bytes]:
    """A run's messages as SSE, numbered by ``seq_id`` from 1, from ``starting_after`` on, until it ends.

    Reads the committed rows, so it works from any process and can be resumed at any ``seq_id``.
    """
    sent = starting_after
    last_output = time.monotonic()
    deadline = time.monotonic() + MAX_STREAM_SECONDS
    while time.monotonic() < deadline:
        current, messages = await sync_to_async(_stream_snapshot)(run.pk)
        for index, message in enumerate(messages[sent:], start=sent + 1):
            yield sse_frame(message | {"seq_id": index})
            sent = index
            last_output = time.monotonic()
        if current.status in FINISHED:
            yield sse_frame(stop_reason_json(current.stop_reason or "error"))
            yield sse_frame(usage_json(run_usage(current), [current.public_id]))
            yield sse_frame("[DONE]")
            return
        if time.monotonic() - last_output > settings.SSE_KEEPALIVE_SECONDS:
            yield keep_alive(include_pings=include_pings)
            last_output = time.monotonic()
        await asyncio.sleep(poll_interval)


def run_stream_response(
    run: Run, *, starting_after: int = 0, include_pings: bool = False, poll_interval: float = 0.1
) -> StreamingHttpResponse:
    return sse_response(
        run_stream(run, starting_after=starting_after, include_pings=include_pings, poll_interval=poll_interval)
    )


class RunStreamInput(serializers.Serializer):
    starting_after = serializers.IntegerField(required=False, min_value=0, allow_null=True)
    include_pings = serializers.BooleanField(required=False, allow_null=True)
    poll_interval = serializers.FloatField(required=False, min_value=0.01, max_value=10, allow_null=True)
    batch_size = serializers.IntegerField(required=False, min_value=1, allow_null=True)


class RunStreamView(OrgScopedAPIView):
    @extend_schema(
        operation_id="runs_stream",
        request=RunStreamInput,
        responses={(200, "text/event-stream"): s.LettaStreamEventOutput, 404: s.ErrorOutput, 422: s.ErrorOutput},
    )
    def post(self, request: Request, run_id: str) -> StreamingHttpResponse:
        run = get_for_org(Run, self.organization, run_id)
        body = RunStreamInput(data=request.data if isinstance(request.data, dict) else {})
        if not body.is_valid():
            from agents.api.errors import validation_detail

            raise ValidationFailed(validation_detail(body.errors))
        data = body.validated_data
        return run_stream_response(
            run,
            starting_after=data.get("starting_after") or 0,
            include_pings=bool(data.get("include_pings")),
            poll_interval=data.get("poll_interval") or 0.1,
        )


class StepListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="steps_list",
        parameters=[OpenApiParameter("agent_id", str), OpenApiParameter("limit", LIMIT)],
        responses={200: s.StepOutput(many=True), 422: s.ErrorOutput},
    )
    def get(self, request: Request) -> Response:
        steps = Step.objects.for_org(self.organization).order_by("-created_at")
        if self.query_str("agent_id"):
            steps = steps.filter(agent_id=Agent.parse_public_id(self.query_str("agent_id")))
        return Response([step_json(step) for step in steps[: self.query_int("limit", default=50)]])


class StepDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="steps_retrieve", responses={200: s.StepOutput, 404: s.ErrorOutput})
    def get(self, request: Request, step_id: str) -> Response:
        return Response(step_json(get_for_org(Step, self.organization, step_id)))
