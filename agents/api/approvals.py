"""``GET /v1/approvals/pending``: an extension (no Letta counterpart) listing every approval request
of the organization that waits for a person, newest first (``agents.approvals.inbox``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from typing_extensions import TypedDict

from agents.api.base import OrgScopedAPIView
from agents.approvals.inbox import PendingApproval, pending_approvals
from agents.wire.messages import ApprovalRequestMessage
from agents.wire.values import DateTime, letta_timestamp

if TYPE_CHECKING:
    from rest_framework.request import Request


class PendingApprovalOutput(TypedDict):
    """An approval request that waits for a person, with its agent."""

    id: str
    """The approval request message's id."""
    agent_id: str
    agent_name: str
    requested_at: DateTime | None
    approval_request_message: ApprovalRequestMessage
    """What ``GET /v1/agents/{id}`` gives as ``pending_approval``."""


def pending_approval_json(pending: PendingApproval) -> PendingApprovalOutput:
    request = cast("ApprovalRequestMessage", pending.request)
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
        responses={200: list[PendingApprovalOutput]},
    )
    def get(self, request: Request) -> Response:
        return Response([pending_approval_json(pending) for pending in pending_approvals(self.organization)])
