from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone

from agents.broadcast import agent_group
from agents.engine.inputs import TurnRequest
from agents.errors import AgentBusy
from agents.models import Agent, Run, RunStatus
from agents.runs.execute import execute_queued
from agents.runs.start import RunMode, run_start
from agents.runs.state import SWEPT_EVENT_SEQ
from agents.runs.sweeper import stale_after, sweep_stale_runs
from config import settings as production_settings
from config.celery import app as celery_app
from tests.factories import AgentFactory, RunFactory
from tests.support.sockets import IN_MEMORY_LAYER

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER
    settings.AGENT_TURN_LOCK_SECONDS = 60
    settings.RUN_EXECUTOR = "inprocess"


def running_run(agent: Agent, heartbeat_age: timedelta) -> Run:
    now = timezone.now()
    run = RunFactory(
        agent=agent, status=RunStatus.RUNNING, started_at=now - heartbeat_age, heartbeat_at=now - heartbeat_age
    )
    Agent.objects.filter(pk=agent.pk).update(turn_lock_run_id=run.pk, turn_lock_expires_at=now + timedelta(seconds=5))
    return run


def listen(agent: Agent) -> tuple[object, str]:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(agent_group(agent.pk), channel)
    return layer, channel


def test_the_stale_bound_is_twice_the_turn_lease(settings):
    settings.AGENT_TURN_LOCK_SECONDS = 45

    assert stale_after() == timedelta(seconds=90)


def test_by_default_a_dead_workers_run_is_ended_within_a_minute_and_a_live_one_renews_well_inside(settings):
    """The shipped defaults (``config.settings``, before the test settings turn the sweep off)."""
    lease = production_settings.AGENT_TURN_LOCK_SECONDS
    settings.AGENT_TURN_LOCK_SECONDS = lease
    settings.RUN_STALE_SECONDS = production_settings.RUN_STALE_SECONDS
    stale = stale_after().total_seconds()

    assert stale + production_settings.RUN_SWEEP_INTERVAL_SECONDS <= 60
    assert stale + production_settings.UPKEEP_BEAT_SECONDS <= 60
    assert lease / 3 * 4 <= stale  # four heartbeats fit in the stale window


def test_it_fails_a_run_whose_worker_stopped_heart_beating_and_releases_the_agent():
    agent = AgentFactory()
    run = running_run(agent, heartbeat_age=stale_after() + timedelta(seconds=1))

    swept = sweep_stale_runs()

    run.refresh_from_db()
    agent.refresh_from_db()
    assert swept == 1
    assert run.status == RunStatus.FAILED
    assert run.stop_reason == "error"
    assert "stopped responding" in run.error["message"]
    assert run.completed_at is not None
    assert run.cancel_requested_at is not None
    assert agent.turn_lock_run_id is None
    assert agent.turn_lock_expires_at is None


def test_it_tells_the_agent_tabs_what_happened_with_a_verdict_after_every_event(django_capture_on_commit_callbacks):
    agent = AgentFactory()
    run = running_run(agent, heartbeat_age=timedelta(minutes=10))
    layer, channel = listen(agent)

    with django_capture_on_commit_callbacks(execute=True):
        sweep_stale_runs()

    message = async_to_sync(layer.receive)(channel)
    [payload] = message["events"]
    assert payload["type"] == "run_finished"
    assert payload["run_id"] == run.public_id
    assert payload["stop_reason"] == "error"
    assert payload["seq"] == SWEPT_EVENT_SEQ
    assert "stopped responding" in payload["error"]


def test_it_leaves_a_run_that_heart_beats_alone():
    agent = AgentFactory()
    run = running_run(agent, heartbeat_age=stale_after() - timedelta(seconds=5))

    swept = sweep_stale_runs()

    run.refresh_from_db()
    agent.refresh_from_db()
    assert swept == 0
    assert run.status == RunStatus.RUNNING
    assert agent.turn_lock_run_id == run.pk


def test_it_ends_a_run_once_however_often_it_sweeps():
    agent = AgentFactory()
    running_run(agent, heartbeat_age=timedelta(minutes=10))

    assert sweep_stale_runs() == 1
    assert sweep_stale_runs() == 0


def test_it_fails_a_queued_run_that_no_executor_claimed():
    agent = AgentFactory()
    run = RunFactory(agent=agent, status=RunStatus.QUEUED)
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - stale_after() - timedelta(seconds=1))
    fresh = RunFactory(agent=agent, status=RunStatus.QUEUED)

    swept = sweep_stale_runs()

    run.refresh_from_db()
    fresh.refresh_from_db()
    assert swept == 1
    assert run.status == RunStatus.FAILED
    assert "No worker picked this run up" in run.error["message"]
    assert fresh.status == RunStatus.QUEUED


def test_it_leaves_another_run_lease_on_the_agent_alone():
    agent = AgentFactory()
    dead = running_run(agent, heartbeat_age=timedelta(minutes=10))
    live = RunFactory(agent=agent, status=RunStatus.RUNNING, heartbeat_at=timezone.now())
    Agent.objects.filter(pk=agent.pk).update(turn_lock_run_id=live.pk)

    sweep_stale_runs()

    agent.refresh_from_db()
    dead.refresh_from_db()
    assert dead.status == RunStatus.FAILED
    assert agent.turn_lock_run_id == live.pk


def test_celery_beat_runs_the_sweeper_and_the_worker_knows_the_task():
    schedule = celery_app.conf.beat_schedule

    entries = [entry for entry in schedule.values() if entry["task"] == "agents.sweeper.sweep_stale_runs_task"]

    assert len(entries) == 1
    assert entries[0]["schedule"] <= stale_after().total_seconds()
    celery_app.loader.import_default_modules()  # what a worker imports at start
    assert "agents.sweeper.sweep_stale_runs_task" in celery_app.tasks


def test_a_duplicate_delivery_of_a_claimed_run_does_nothing():
    agent = AgentFactory()
    run = RunFactory(agent=agent, status=RunStatus.RUNNING, request={"messages": [{"role": "user", "content": "hi"}]})
    rows = agent.messages.count()
    layer, channel = listen(agent)

    async_to_sync(execute_queued)(run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert agent.messages.count() == rows
    with pytest.raises(TimeoutError):
        async_to_sync(_receive_within)(layer, channel, 0.2)


async def _receive_within(layer, channel, seconds):
    import asyncio

    return await asyncio.wait_for(layer.receive(channel), seconds)


def test_a_run_is_ended_even_when_its_tabs_cannot_be_told(monkeypatch, django_capture_on_commit_callbacks):
    agent = AgentFactory()
    run = running_run(agent, heartbeat_age=timedelta(minutes=10))

    async def unreachable(agent_id, payloads):
        raise ConnectionError("the channel layer is down")

    monkeypatch.setattr("agents.broadcast.publish", unreachable)

    with django_capture_on_commit_callbacks(execute=True):
        swept = sweep_stale_runs()

    run.refresh_from_db()
    assert swept == 1
    assert run.status == RunStatus.FAILED


def a_message() -> TurnRequest:
    return TurnRequest.model_validate({"messages": [{"role": "user", "content": "hello again"}]})


def test_a_new_run_starts_on_an_agent_held_by_a_run_whose_executor_died():
    agent = AgentFactory()
    dead = running_run(agent, heartbeat_age=stale_after() + timedelta(seconds=1))

    started = run_start(agent=agent, request=a_message(), mode=RunMode.INLINE)

    dead.refresh_from_db()
    agent.refresh_from_db()
    assert dead.status == RunStatus.FAILED
    assert started.status == RunStatus.RUNNING  # an inline run starts running, holding the thread's lease
    assert agent.turn_lock_run_id == started.pk


def test_a_new_run_is_refused_while_the_agents_run_still_heart_beats():
    agent = AgentFactory()
    alive = running_run(agent, heartbeat_age=timedelta(seconds=1))

    with pytest.raises(AgentBusy):
        run_start(agent=agent, request=a_message(), mode=RunMode.INLINE)

    alive.refresh_from_db()
    assert alive.status == RunStatus.RUNNING
    assert Run.objects.filter(agent=agent).count() == 1
