"""A turn interrupted from outside (its task cancelled, a server shutting down) never ends as a clean end_turn."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from asgiref.sync import sync_to_async

from agents import services
from agents.engine.events import TextDeltaEvent
from agents.engine.inputs import UserInput
from agents.llm.demo import DemoClient
from agents.models import Run
from agents.runs.turns import TurnSetup, open_turn

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_turn_cancelled_mid_answer_is_not_recorded_as_a_completed_end_turn(cast) -> None:
    agent = await sync_to_async(services.agent_create)(organization=cast.org_a, name="cut", model="demo/echo-1")
    run = await Run.objects.acreate(organization=cast.org_a, agent=agent)
    turn = await open_turn(
        TurnSetup(
            run=run,
            turn_input=[UserInput(text="Tell me a long story, please.")],
            stream_tokens=True,
            llm=DemoClient(token_delay=0.05),
        )
    )
    answering = asyncio.Event()

    async def consume() -> None:
        async for event in turn.events():
            if isinstance(event, TextDeltaEvent):
                answering.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(answering.wait(), timeout=10)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task

    await run.arefresh_from_db()
    assert (run.status, run.stop_reason) == ("cancelled", "cancelled")
    agent = await sync_to_async(type(agent).objects.get)(pk=agent.pk)
    assert agent.turn_lock_run_id is None
