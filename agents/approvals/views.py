"""The approvals inbox page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.decorators import membership_required
from agents.approvals.inbox import inbox_state

if TYPE_CHECKING:
    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest


@membership_required
@require_GET
def approvals_inbox(request: OrganizationHttpRequest) -> HttpResponse:
    """Every approval request of the organization waiting for a person, newest first, answered in place."""
    state = inbox_state(request.organization)
    return render(request, "agents/approvals.html", {"inbox": state, "items": state["items"]})
