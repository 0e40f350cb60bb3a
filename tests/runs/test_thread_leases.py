"""Each thread of an agent has its own busy rule and lease: its default thread, and each conversation."""

from __future__ import annotations

import pytest
from django.db import transaction

from agents import services
from agents.conversations.services import conversation_create
from agents.engine.inputs import TurnRequest
from agents.errors import AgentBusy
from agents.models import Agent, Conversation, Run
from agents.runs import state as run_state
from agents.runs.start import RunMode, run_start
from tests.factories import OrganizationFactory, RunFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent() -> Agent:
    return services.agent_create(organization=OrganizationFactory(), name="threads", model="demo/echo-1")


@pytest.fixture
def conversation(agent: Agent) -> Conversation:
    return conversation_create(agent=agent, user=None)


def test_a_conversations_lease_is_its_own_and_leaves_the_agents_free(agent, conversation):
    in_conversation, in_default = RunFactory(agent=agent, conversation=conversation), RunFactory(agent=agent)

    assert run_state.take_lease(agent.pk, in_conversation.pk, conversation.pk)
    assert run_state.take_lease(agent.pk, in_default.pk)
    assert not run_state.take_lease(agent.pk, RunFactory(agent=agent).pk, conversation.pk)

    run_state.release_lease(agent.pk, in_conversation.pk, conversation.pk)
    conversation.refresh_from_db()
    assert conversation.turn_lock_run_id is None
    assert Agent.objects.get(pk=agent.pk).turn_lock_run_id == in_default.pk


def test_the_busy_rule_is_per_thread(agent, conversation):
    Run.objects.create(organization=agent.organization, agent=agent, conversation=conversation)

    assert Run.objects.busy(agent.pk, conversation.pk)
    assert not Run.objects.busy(agent.pk)
    with transaction.atomic():
        assert Agent.objects.hold(agent.pk, conversation.pk).busy
        assert not Agent.objects.hold(agent.pk).busy


def test_a_start_on_a_busy_conversation_is_refused_and_another_thread_starts(agent, conversation):
    request = TurnRequest.parse({"messages": [{"role": "user", "content": "hi"}]})
    first = run_start(agent=agent, request=request, mode=RunMode.INLINE, conversation=conversation)

    with pytest.raises(AgentBusy):
        run_start(agent=agent, request=request, mode=RunMode.INLINE, conversation=conversation)
    other = run_start(agent=agent, request=request, mode=RunMode.INLINE)

    assert (first.conversation_id, other.conversation_id) == (conversation.pk, None)
