"""A run's writes sent together (``agents.runs.writes``), and the cancel checks folded into them (issue 24)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from django.utils import timezone

from agents.engine.inputs import UserInput
from agents.models import Agent, Message, Run, Step
from agents.runs import writes
from tests.engine.conftest import STANDARD_TOOLS, Harness, make_agent
from tests.factories import AgentFactory
from tests.fakes import reply

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from agents.llm.base import LLMEvent, LLMRequest
    from tests.fakes import ScriptedLLM

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
async def harness(transactional_db: None) -> Harness:
    """An agent with rows in the real database, driven turn by turn with a scripted model."""
    return Harness(await make_agent(), STANDARD_TOOLS)


@dataclass
class CancelledWhileAnswering:
    """The scripted model, but the run is asked to stop while it answers (after its first event)."""

    inner: ScriptedLLM
    run_id: Any
    provider: str = "scripted"

    async def generate(self, request: LLMRequest, *, stream: bool) -> AsyncIterator[LLMEvent]:
        async for event in self.inner.generate(request, stream=stream):
            await Run.objects.filter(pk=self.run_id).aupdate(cancel_requested_at=timezone.now())
            yield event

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        return self.inner.build_payload(request, stream=stream)


async def events_of(harness: Harness, script: list[Any], *, cancel_while_answering: bool) -> list[Any]:
    turn = await harness.start([UserInput("hello")], script)
    if cancel_while_answering:
        turn.collab.llm = CancelledWhileAnswering(turn.collab.llm, harness.runs[-1].pk)  # type: ignore[arg-type]
    return [event async for event in turn.events()]


async def test_a_cancel_while_the_model_gives_its_last_answer_keeps_no_answer_and_ends_the_run_cancelled(
    harness: Harness,
) -> None:
    events = await events_of(harness, [reply("Hi there!")], cancel_while_answering=True)

    assert events[-1].stop_reason == "cancelled"
    assert [row.role for row in await harness.rows()] == ["system", "user", "user"]
    run = await Run.objects.aget(pk=harness.runs[-1].pk)
    assert (run.status, run.stop_reason) == ("cancelled", "cancelled")
    step = await Step.objects.aget(run=run)
    assert step.status == "cancelled"
    agent = await Agent.objects.aget(pk=harness.agent.pk)
    assert agent.turn_lock_run_id is None


async def test_a_cancel_while_the_model_asks_for_a_tool_runs_no_tool_and_keeps_no_answer(harness: Harness) -> None:
    script = [reply("r", tool_calls=[("roll_dice", {"num_sides": 6})]), reply("never")]

    events = await events_of(harness, script, cancel_while_answering=True)

    assert events[-1].stop_reason == "cancelled"
    assert harness.runner.calls == []
    assert [row.role for row in await harness.rows()] == ["system", "user", "user"]
    assert (await Run.objects.aget(pk=harness.runs[-1].pk)).status == "cancelled"


async def test_a_cancel_while_a_tool_runs_stops_the_run_before_its_next_step(harness: Harness) -> None:
    async def cancel_then_roll(num_sides: int) -> str:
        await Run.objects.filter(pk=harness.runs[-1].pk).aupdate(cancel_requested_at=timezone.now())
        return str(num_sides)

    harness.runner.functions["roll_dice"] = cancel_then_roll
    script = [reply("r", tool_calls=[("roll_dice", {"num_sides": 6})]), reply("never")]

    events = await events_of(harness, script, cancel_while_answering=False)

    assert events[-1].stop_reason == "cancelled"
    assert [row.role for row in await harness.rows()][-2:] == ["assistant", "tool"]
    run = await Run.objects.aget(pk=harness.runs[-1].pk)
    assert run.status == "cancelled"
    steps = [step async for step in Step.objects.filter(run=run)]
    assert [(step.number, step.status) for step in steps] == [(1, "success")]  # the first step's end is kept


async def test_a_turn_not_asked_to_stop_stores_its_answer_with_the_runs_end(harness: Harness) -> None:
    events = await events_of(harness, [reply("Hi there!")], cancel_while_answering=False)

    assert events[-1].stop_reason == "end_turn"
    assert [row.role for row in await harness.rows()][-1] == "assistant"
    run = await Run.objects.aget(pk=harness.runs[-1].pk)
    assert (run.status, run.step_count, run.total_tokens) == ("completed", 1, 15)
    step = await Step.objects.aget(run=run)
    assert (step.status, step.stop_reason, step.prompt_tokens) == ("success", "end_turn", 10)


def test_writes_sent_together_are_all_written_and_each_counted() -> None:
    agent = AgentFactory()
    run = Run.objects.create(organization_id=agent.organization_id, agent=agent, status="running")
    rows = [
        Message(organization_id=agent.organization_id, agent=agent, seq=100 + n, role="user", content=[], run=run)
        for n in range(2)
    ]

    sent, counts = writes.write_together(
        [writes.insert(rows), writes.update(Run.objects.filter(pk=run.pk), heartbeat_at=timezone.now())],
        unless_cancelled=run.pk,
    )

    assert (sent, counts) == (True, [2, 1])
    assert Message.objects.filter(run=run).count() == 2
    assert Run.objects.get(pk=run.pk).heartbeat_at is not None


def test_writes_guarded_by_a_cancel_write_nothing_once_the_run_is_asked_to_stop() -> None:
    agent = AgentFactory()
    run = Run.objects.create(
        organization_id=agent.organization_id, agent=agent, status="running", cancel_requested_at=timezone.now()
    )
    row = Message(organization_id=agent.organization_id, agent=agent, seq=100, role="user", content=[], run=run)

    sent, counts = writes.write_together(
        [writes.insert([row]), writes.update(Run.objects.filter(pk=run.pk), heartbeat_at=timezone.now())],
        unless_cancelled=run.pk,
    )

    assert (sent, counts) == (False, [0, 0])
    assert not Message.objects.filter(run=run).exists()
    assert Run.objects.get(pk=run.pk).heartbeat_at is None


async def test_a_cancel_while_a_streamed_answer_comes_in_ends_the_run_cancelled(harness: Harness) -> None:
    turn = await harness.start([UserInput("hello")], [reply("Hi there!")], stream_tokens=True)
    turn.collab.llm = CancelledWhileAnswering(turn.collab.llm, harness.runs[-1].pk)  # type: ignore[arg-type]

    events = [event async for event in turn.events()]

    # The step's start was a check a moment before the model was called; the stream's own check reads the
    # run again, so a cancel that came while the model answered is seen.
    assert events[-1].stop_reason == "cancelled"
    run = await Run.objects.aget(pk=harness.runs[-1].pk)
    assert (run.status, run.stop_reason) == ("cancelled", "cancelled")
