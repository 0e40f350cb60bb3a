"""``agents.runs.state`` owns the turn lease; the busy rule and the ``seq`` allocator live on the models.

One busy rule (an agent with a queued or running run is busy) for every writer, one writer of
the lease (take, renew, release), one allocator of ``seq`` (``SeqRange``, handed out by whoever
holds the agent).
"""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.db import transaction
from django.utils import timezone

from agents import services
from agents.engine.store import MessageDraft
from agents.errors import AgentBusy
from agents.models import Agent, Message, Run, RunStatus
from agents.runs import state as run_state
from agents.runs.preview import agent_reset_messages
from agents.runs.store import DjangoConversationStore
from tests.factories import OrganizationFactory, RunFactory

ROOT = Path(__file__).resolve().parents[2]
LEASE_FIELDS = {"turn_lock_run_id", "turn_lock_expires_at"}


@pytest.fixture
def agent(db: None) -> Agent:
    return services.agent_create(organization=OrganizationFactory(), name="held", model="demo/echo-1")


def test_only_the_state_machine_writes_the_turn_lease() -> None:
    writers = set()
    for path in sorted((ROOT / "agents").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            updates = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
            if updates and {k.arg for k in node.keywords} & LEASE_FIELDS:
                writers.add(path.relative_to(ROOT).as_posix())

    assert writers == {"agents/runs/state.py"}


def test_a_lease_held_by_a_live_run_is_refused_to_another_and_taken_once_it_expires(agent: Agent) -> None:
    holder, other = RunFactory(agent=agent), RunFactory(agent=agent)
    assert run_state.take_lease(agent.pk, holder.pk)

    assert run_state.take_lease(agent.pk, holder.pk)  # its holder may take it again
    assert not run_state.take_lease(agent.pk, other.pk)

    Agent.objects.filter(pk=agent.pk).update(turn_lock_expires_at=timezone.now() - timedelta(seconds=1))
    assert run_state.take_lease(agent.pk, other.pk)
    assert Agent.objects.get(pk=agent.pk).turn_lock_run_id == other.pk


def test_only_its_holder_releases_a_lease(agent: Agent) -> None:
    holder, other = RunFactory(agent=agent), RunFactory(agent=agent)
    run_state.take_lease(agent.pk, holder.pk)

    run_state.release_lease(agent.pk, other.pk)
    assert Agent.objects.get(pk=agent.pk).turn_lock_run_id == holder.pk

    run_state.release_lease(agent.pk, holder.pk)
    held = Agent.objects.get(pk=agent.pk)
    assert (held.turn_lock_run_id, held.turn_lock_expires_at) == (None, None)


def test_a_queued_run_makes_the_agent_busy_for_a_reset_as_for_a_start(agent: Agent) -> None:
    run = RunFactory(agent=agent)  # queued: no turn holds the lease yet
    rows_before = Message.objects.filter(agent=agent).count()

    with pytest.raises(AgentBusy):
        agent_reset_messages(agent=agent)

    assert Message.objects.filter(agent=agent).count() == rows_before
    Run.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
    assert agent_reset_messages(agent=agent).context_start_seq == 2


def test_holding_an_agent_says_whether_it_is_busy_and_which_seqs_come_next(agent: Agent) -> None:
    with transaction.atomic():
        hold = Agent.objects.hold(agent.pk)
    assert (hold.busy, hold.seqs.take(2), hold.seqs.take()) == (False, 2, 4)

    RunFactory(agent=agent, status=RunStatus.RUNNING)
    with transaction.atomic():
        assert Agent.objects.hold(agent.pk).busy


@pytest.mark.django_db(transaction=True)
def test_every_writer_of_an_agents_rows_takes_the_next_seqs_in_order() -> None:
    agent = services.agent_create(organization=OrganizationFactory(), name="writer", model="demo/echo-1")
    agent_reset_messages(agent=agent)
    run = RunFactory(agent=agent)
    store = DjangoConversationStore(agent=agent, run=run)
    async_to_sync(store.append)([MessageDraft(role="user", content=[{"type": "text", "text": "hi"}])])

    seqs = list(Message.objects.filter(agent=agent).order_by("seq").values_list("seq", flat=True))
    assert seqs == [0, 1, 2, 3, 4]
