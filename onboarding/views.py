"""The onboarding page action: open the organization's starter agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from accounts.decorators import membership_required
from onboarding.starter import starter_kit_create

if TYPE_CHECKING:
    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest


@membership_required
@require_POST
def starter_agent_open(request: OrganizationHttpRequest) -> HttpResponse:
    """The organization's starter agent (made again if it was deleted), opened in the chat."""
    agent = starter_kit_create(organization=request.organization, created_by=request.user)
    return redirect("agents:chat", agent_id=agent.public_id)
