"""``/v1/runs`` and ``/v1/steps``: a run's record, messages, steps, usage, cancel, and its resumable stream."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from typing_extensions import TypedDict

from accounts.access import get_for_org
from accounts.scoping import page
from agents.api.base import OrgScopedAPIView
from agents.api.errors import validation_detail
from agents.api.openapi import cursor_parameters, errors
from agents.api.run_stream import run_stream_response
from agents.api.stream_guard import StreamGuard
from agents.api.streaming import LettaStreamEvent
from agents.errors import ValidationFailed
from agents.models import Agent, Message, Run, RunStatus, Step
from agents.runs import state as run_state
from agents.wire import resources as letta
from agents.wire.messages import LettaMessage, letta_messages
from agents.wire.resources import run_json, step_json

if TYPE_CHECKING:
    from django.http import StreamingHttpResponse
    from rest_framework.request import Request


class RunUsage(TypedDict):
    completion_tokens: int
    prompt_tokens: int
    total_tokens: int
    step_count: int


def run_statuses(names: list[str]) -> list[str]:
    """Letta's status names (``created``, ``running``, ``completed``, ``failed``, ``cancelled``) as stored ones."""
    return [RunStatus.from_letta(name) for name in names]


class RunListView(OrgScopedAPIView):
    active_only = False

    @extend_schema(
        operation_id="runs_list",
        parameters=[
            OpenApiParameter("agent_id", str),
            OpenApiParameter("agent_ids", str, many=True),
            OpenApiParameter("background", bool),
            OpenApiParameter("stop_reason", str),
            OpenApiParameter("active", bool, description="Only runs not finished yet (1.x's ``list_active``)."),
            OpenApiParameter(
                "statuses", str, many=True, description="Only runs in these statuses (created, running, completed…)."
            ),
            OpenApiParameter("ascending", bool, description="Oldest first (legacy form of order=asc)."),
            *cursor_parameters("run", limit=100, order="desc"),
        ],
        responses={200: list[letta.Run], **errors(404, 422)},
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
        statuses = self.query_list("statuses")
        if statuses:
            queryset = queryset.filter(status__in=run_statuses(statuses))
        default_order = "asc" if self.query_bool("ascending") else "desc"
        runs = page(queryset, Run, **self.cursor(limit=100, order=default_order))
        return Response([run_json(run) for run in runs])


class ActiveRunListView(RunListView):
    active_only = True

    @extend_schema(operation_id="runs_list_active", responses={200: list[letta.Run]})
    def get(self, request: Request) -> Response:
        return super().get(request)


class RunDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="runs_retrieve", responses={200: letta.Run, **errors(404)})
    def get(self, request: Request, run_id: str) -> Response:
        return Response(run_json(get_for_org(Run, self.organization, run_id)))

    @extend_schema(operation_id="runs_delete", responses={200: letta.Run, **errors(404)})
    def delete(self, request: Request, run_id: str) -> Response:
        run = run_state.cancel(get_for_org(Run, self.organization, run_id))
        body = run_json(run)
        run.delete()
        return Response(body)


class RunCancelView(OrgScopedAPIView):
    @extend_schema(operation_id="runs_cancel", request=None, responses={200: letta.Run, **errors(404)})
    def post(self, request: Request, run_id: str) -> Response:
        return Response(run_json(run_state.cancel(get_for_org(Run, self.organization, run_id))))


class RunMessagesView(OrgScopedAPIView):
    @extend_schema(
        operation_id="runs_messages_list",
        parameters=cursor_parameters("message", limit=100, order="asc"),
        responses={200: list[LettaMessage], **errors(404)},
    )
    def get(self, request: Request, run_id: str) -> Response:
        """``limit`` counts stored rows; a row may answer several messages (reasoning, text, calls) of one id."""
        run = get_for_org(Run, self.organization, run_id)
        rows = Message.objects.for_org(self.organization).filter(run=run)
        rows_page = page(rows, Message, fields=("seq", "pk"), **self.cursor(limit=100, order="asc"))
        messages = letta_messages(sorted(rows_page, key=lambda row: row.seq))
        return Response(messages if self.query_str("order") != "desc" else list(reversed(messages)))


class RunStepsView(OrgScopedAPIView):
    @extend_schema(
        operation_id="runs_steps_list",
        parameters=cursor_parameters("step", limit=100, order="asc"),
        responses={200: list[letta.Step], **errors(404)},
    )
    def get(self, request: Request, run_id: str) -> Response:
        run = get_for_org(Run, self.organization, run_id)
        steps = Step.objects.for_org(self.organization).filter(run=run)
        steps_page = page(steps, Step, fields=("number", "pk"), **self.cursor(limit=100, order="asc"))
        return Response([step_json(step) for step in steps_page])


class RunUsageView(OrgScopedAPIView):
    @extend_schema(operation_id="runs_usage_retrieve", responses={200: RunUsage, **errors(404)})
    def get(self, request: Request, run_id: str) -> Response:
        run = get_for_org(Run, self.organization, run_id)
        usage: RunUsage = {
            "completion_tokens": run.completion_tokens,
            "prompt_tokens": run.prompt_tokens,
            "total_tokens": run.total_tokens,
            "step_count": run.step_count,
        }
        return Response(usage)


class RunStreamInput(serializers.Serializer):
    starting_after = serializers.IntegerField(required=False, min_value=0, allow_null=True)
    include_pings = serializers.BooleanField(required=False, allow_null=True)
    poll_interval = serializers.FloatField(
        required=False,
        min_value=0.01,
        max_value=10,
        allow_null=True,
        help_text="Accepted for compatibility: the stream follows live events.",
    )
    batch_size = serializers.IntegerField(
        required=False, min_value=1, allow_null=True, help_text="Accepted for compatibility."
    )


class RunStreamView(OrgScopedAPIView):
    @extend_schema(
        operation_id="runs_stream",
        request=RunStreamInput,
        responses={(200, "text/event-stream"): LettaStreamEvent, **errors(404, 422)},
    )
    def post(self, request: Request, run_id: str) -> StreamingHttpResponse:
        run = get_for_org(Run, self.organization, run_id)
        body = RunStreamInput(data=request.data if isinstance(request.data, dict) else {})
        if not body.is_valid():
            raise ValidationFailed(validation_detail(body.errors))
        data = body.validated_data
        return StreamGuard.respond(
            request,
            lambda: run_stream_response(
                run, starting_after=data.get("starting_after") or 0, include_pings=bool(data.get("include_pings"))
            ),
        )


class StepListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="steps_list",
        parameters=[
            OpenApiParameter("agent_id", str),
            OpenApiParameter("feedback", str, enum=["positive", "negative"], description="Only steps with it."),
            OpenApiParameter("has_feedback", bool, description="Only steps with (or without) feedback."),
            *cursor_parameters("step", limit=50, order="desc"),
        ],
        responses={200: list[letta.Step], **errors(404, 422)},
    )
    def get(self, request: Request) -> Response:
        steps = Step.objects.for_org(self.organization)
        if self.query_str("agent_id"):
            # An unparsable id is None here: ``agent_id IS NULL`` matches no step (the stubs refuse None).
            steps = steps.filter(agent_id=Agent.parse_public_id(self.query_str("agent_id")))  # type: ignore[misc]
        if self.query_str("feedback"):
            steps = steps.filter(feedback=self.query_choice("feedback", ("positive", "negative"), default="positive"))
        has_feedback = self.query_bool("has_feedback")
        if has_feedback is not None:
            steps = steps.exclude(feedback="") if has_feedback else steps.filter(feedback="")
        steps_page = page(steps, Step, **self.cursor(limit=50, order="desc"))
        return Response([step_json(step) for step in steps_page])


class StepDetailView(OrgScopedAPIView):
    @extend_schema(operation_id="steps_retrieve", responses={200: letta.Step, **errors(404)})
    def get(self, request: Request, step_id: str) -> Response:
        return Response(step_json(get_for_org(Step, self.organization, step_id)))
