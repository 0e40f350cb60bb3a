"""``GET /v1/approvals/pending``: an extension (no Letta counterpart) listing every approval request
of the organization that waits for a person, newest first (``agents.approvals.inbox``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from agents.api import serializers as s
from agents.api.base import OrgScopedAPIView
from agents.approvals.inbox import PendingApproval, pending_approvals
from agents.wire.messages import letta_timestamp

if TYPE_CHECKING:
    from rest_framework.request import Request


class PendingApprovalOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The approval request message's id.")
    agent_id = serializers.CharField()
    agent_name = serializers.CharField()
    requested_at = serializers.DateTimeField()
    approval_request_message = s.LettaMessageOutput(help_text="What GET /v1/agents/{id} gives as pending_approval.")


def pending_approval_json(pending: PendingApproval) -> dict[str, Any]:
    request = pending.request
    return {
        "id": request["id"],
        "agent_id": pending.agent.public_id,
        "agent_name": pending.agent.name,
        "requested_at": letta_timestamp(pending.row.created_at),
        "approval_request_message": request,
    }


class PendingApprovalListView(OrgScopedAPIView):
    @extend_schema(
        operation_id="approvals_list_pending",
        summary="List pending approvals (extension)",
        description=(
            "Every approval request of the caller's organization that waits for a person, across agents, "
            "newest first. Answer one with POST /v1/agents/{agent_id}/messages and an approval message. "
            "An extension of this server; Letta has no such endpoint."
        ),
        responses={200: PendingApprovalOutput(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response([pending_approval_json(pending) for pending in pending_approvals(self.organization)])
