"""Approvals that wait too long are denied, the turn goes on, and nothing expires unless asked."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from agents import services
from agents.approvals.expiry import expire_pending_approvals
from agents.models import Message, Run
from tests.factories import MessageFactory
from tests.support.polling import poll

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def waiting_agent(cast, settings):
    """An agent whose last row asks for approval of one call, an hour ago."""
    settings.RUN_EXECUTOR = "inprocess"
    agent = services.agent_create(organization=cast.org_a, name="Waiting", model="demo/echo-1")
    last = Message.objects.filter(agent=agent).order_by("-seq").values_list("seq", flat=True).first()
    MessageFactory(agent=agent, seq=last + 1, role="user", content=[{"type": "text", "text": "call it"}])
    asking = MessageFactory(
        agent=agent,
        seq=last + 2,
        role="assistant",
        content=[{"type": "text", "text": "Calling get_secret_code."}],
        tool_calls=[{"id": "toolu_1", "name": "get_secret_code", "arguments": "{}", "requires_approval": True}],
    )
    Message.objects.filter(pk=asking.pk).update(created_at=timezone.now() - timedelta(hours=1))
    return agent


def test_an_approval_past_the_organizations_limit_is_denied_and_the_agent_answers(cast, waiting_agent):
    cast.org_a.approval_expiry_minutes = 30
    cast.org_a.save()

    assert expire_pending_approvals() == 1

    run = poll(lambda: Run.objects.get(agent=waiting_agent), lambda run: run.status == "completed")
    assert run.stop_reason == "end_turn"
    [decision] = Message.objects.get(agent=waiting_agent, role="approval").approvals
    assert decision | {"decided_at": None} == {
        "type": "approval",
        "tool_call_id": "toolu_1",
        "approve": False,
        "reason": "Approval expired after 30 minutes",
        "decided_by": "Approval expiry",
        "decided_by_user_id": None,
        "decided_by_api_key_id": None,
        "decided_at": None,
        "transport": "expiry",
        "original_arguments": None,
        "arguments": None,
        "always_allow": False,
    }
    assert datetime.fromisoformat(decision["decided_at"]) > timezone.now() - timedelta(minutes=5)
    [result] = Message.objects.get(agent=waiting_agent, role="tool").tool_returns
    assert result["status"] == "error" and "Approval expired after 30 minutes" in result["tool_return"]
    assert Message.objects.filter(agent=waiting_agent).order_by("-seq").first().role == "assistant"


def test_the_agents_own_limit_wins_over_the_organizations(cast, waiting_agent):
    cast.org_a.approval_expiry_minutes = 30
    cast.org_a.save()
    waiting_agent.approval_expiry_minutes = 120
    waiting_agent.save()

    assert expire_pending_approvals() == 0
    assert not Run.objects.filter(agent=waiting_agent).exists()


def test_nothing_expires_unless_a_limit_is_set(waiting_agent):
    assert expire_pending_approvals() == 0
    assert not Run.objects.filter(agent=waiting_agent).exists()
