"""Approvals that wait too long resolve as a denial, so a forgotten approval never blocks an agent.

Off unless set: an organization's ``approval_expiry_minutes`` is the default, an agent's own
value wins. An expired request is answered like any other (``agents.approvals.answers``): every
gated call is denied with the reason "Approval expired after N minutes", the turn goes on
so the model can answer, and open tabs see it live. Celery beat calls
it through ``agents.maintenance``; the embedded server on the sweeper's timer.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from agents.approvals.answers import approval_answer
from agents.engine.inputs import ApprovalItem, ToolReturnItem
from agents.errors import ApplicationError
from agents.models import Agent, RunTransport
from agents.selectors import pending_approval_rows

logger = logging.getLogger(__name__)

EXPIRED_REASON = "Approval expired after {minutes} minutes"


def expiry_minutes(agent: Agent) -> int | None:
    """How long ``agent``'s approvals may wait (``None``: for ever)."""
    if agent.approval_expiry_minutes is not None:
        return agent.approval_expiry_minutes
    return agent.organization.approval_expiry_minutes


def expire_pending_approvals(*, now: datetime | None = None) -> int:
    """Deny every approval request that waited past its agent's limit; returns how many were answered."""
    now = now or timezone.now()
    configured = Agent.objects.filter(
        Q(approval_expiry_minutes__isnull=False) | Q(organization__approval_expiry_minutes__isnull=False)
    )
    answered = 0
    for waiting in pending_approval_rows(configured):
        agent = waiting.agent
        minutes = expiry_minutes(agent)
        if minutes is None or waiting.created_at > now - timedelta(minutes=minutes):
            continue
        reason = EXPIRED_REASON.format(minutes=minutes)
        denials: list[ApprovalItem | ToolReturnItem] = [
            ApprovalItem(approve=False, tool_call_id=call["id"], reason=reason)
            for call in waiting.tool_calls
            if call.get("requires_approval")
        ]
        try:
            approval_answer(agent=agent, approvals=denials, transport=RunTransport.EXPIRY)
        except ApplicationError as exc:
            # Answered meanwhile, or a run is active: the next pass looks again.
            logger.info("Approval of agent %s not expired now: %s", agent.pk, exc)
            continue
        answered += 1
        logger.info("Approval request %s of agent %s expired after %s minutes", waiting.pk, agent.pk, minutes)
    return answered
