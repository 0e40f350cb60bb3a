"""A step's feedback (``PATCH /v1/steps/{id}/feedback``) and timings (``GET /v1/steps/{id}/metrics``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from typing_extensions import TypedDict

from accounts.access import get_for_org
from agents import services
from agents.api.base import OrgScopedAPIView
from agents.api.fields import optional, validated
from agents.api.openapi import errors
from agents.models import Step
from agents.wire import resources as letta
from agents.wire.resources import step_json

if TYPE_CHECKING:
    from rest_framework.request import Request

MS_NS = 1_000_000


class StepFeedbackInput(serializers.Serializer):
    feedback = optional(serializers.ChoiceField, choices=["positive", "negative"])
    tags = optional(serializers.ListField, child=serializers.CharField(max_length=200), max_length=100)


class StepMetrics(TypedDict):
    id: str
    organization_id: str
    provider_id: str | None
    run_id: str
    agent_id: str
    step_start_ns: int
    llm_request_start_ns: int | None
    llm_request_ns: int | None
    tool_execution_ns: int | None
    step_ns: int | None
    base_template_id: str | None
    template_id: str | None
    project_id: str | None


def step_metrics(step: Step) -> StepMetrics:
    """The step's timings in nanoseconds: its start, its model call and tool time, and its whole length."""
    start_ns = int(step.created_at.timestamp() * 1e9)
    done = step.completed_at
    return {
        "id": step.public_id,
        "organization_id": f"org-{step.organization_id}",
        "provider_id": None,
        "run_id": f"run-{step.run_id}",
        "agent_id": f"agent-{step.agent_id}",
        "step_start_ns": start_ns,
        "llm_request_start_ns": None,
        "llm_request_ns": step.llm_ms * MS_NS if step.llm_ms is not None else None,
        "tool_execution_ns": step.tool_ms * MS_NS if step.tool_ms is not None else None,
        "step_ns": int((done - step.created_at).total_seconds() * 1e9) if done else None,
        "base_template_id": None,
        "template_id": None,
        "project_id": None,
    }


class StepFeedbackView(OrgScopedAPIView):
    @extend_schema(
        operation_id="steps_feedback_modify",
        request=StepFeedbackInput,
        responses={200: letta.Step, **errors(404, 422)},
    )
    def patch(self, request: Request, step_id: str) -> Response:
        step = get_for_org(Step, self.organization, step_id)
        data = validated(StepFeedbackInput, request.data)
        step = services.step_feedback_set(step=step, feedback=data.get("feedback"), tags=data.get("tags"))
        return Response(step_json(step))


class StepMetricsView(OrgScopedAPIView):
    @extend_schema(operation_id="steps_metrics_retrieve", responses={200: StepMetrics, **errors(404)})
    def get(self, request: Request, step_id: str) -> Response:
        return Response(step_metrics(get_for_org(Step, self.organization, step_id)))
