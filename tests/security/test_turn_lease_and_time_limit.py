"""Issue 14 items 10 and 1 (its run part): a long model call keeps its agent; a run too long is ended.

Item 10: the per-agent lease is renewed on a timer for the whole turn, so a model call
longer than the lease neither lets a second turn start nor gets the live run swept.
Item 1: a run past ``RUN_TIME_LIMIT_SECONDS`` ends ``failed`` with a clear error and frees its agent.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from agents import services
from agents.engine.inputs import TurnRequest
from agents.errors import ApplicationError
from agents.llm.demo import DemoClient
from agents.models import Agent, Run, RunStatus
from agents.runs.execute import start_inline
from agents.runs.start import RunMode, run_start
from agents.runs.sweeper import sweep_stale_runs

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

LEASE_SECONDS = 0.6


class HeldModel:
    """The demo model behind a gate: the (non-streamed) call stays silent until ``release``."""

    provider = "demo"

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.release = asyncio.Event()

    async def generate(self, request: Any, *, stream: bool) -> AsyncIterator[Any]:
        self.called.set()
        await self.release.wait()
        async for event in DemoClient(token_delay=0).generate(request, stream=stream):
            yield event


def hello() -> TurnRequest:
    return TurnRequest.parse({"messages": [{"role": "user", "content": "hello"}]})


async def started_turn(cast: Any, model: HeldModel) -> tuple[Agent, Run, asyncio.Task[list[Any]]]:
    agent = await sync_to_async(services.agent_create)(organization=cast.org_a, name="slow", model="demo/echo-1")
    run = await sync_to_async(run_start)(
        agent=agent, request=hello(), mode=RunMode.INLINE, user=cast.alice, api_key=None
    )
    execution = await start_inline(run, hello(), stream_tokens=False, llm=model)

    async def consume() -> list[Any]:
        return [event async for event in execution.events()]

    task = asyncio.create_task(consume())
    await asyncio.wait_for(model.called.wait(), timeout=10)
    return agent, run, task


async def test_a_model_call_longer_than_the_lease_keeps_the_agent_and_is_not_swept(cast, settings):
    settings.AGENT_TURN_LOCK_SECONDS = LEASE_SECONDS
    settings.RUN_STALE_SECONDS = None  # twice the lease
    model = HeldModel()
    agent, run, turn = await started_turn(cast, model)

    await asyncio.sleep(4 * LEASE_SECONDS)  # the model is still thinking, well past the first lease

    held = await Agent.objects.aget(pk=agent.pk)
    assert held.turn_lock_run_id == run.pk and held.turn_lock_expires_at > timezone.now()
    assert await sync_to_async(sweep_stale_runs)(agent_id=agent.pk) == 0
    with pytest.raises(ApplicationError):  # the busy rule: no second turn
        await sync_to_async(run_start)(agent=agent, request=hello(), mode=RunMode.INLINE, user=cast.alice, api_key=None)
    model.release.set()
    await turn
    await run.arefresh_from_db()
    assert run.status == RunStatus.COMPLETED


async def test_a_run_past_its_time_limit_ends_failed_with_a_clear_error_and_frees_the_agent(cast, settings):
    settings.RUN_TIME_LIMIT_SECONDS = 1
    model = HeldModel()  # never released: the model never answers
    agent, run, turn = await started_turn(cast, model)

    with contextlib.suppress(asyncio.CancelledError):
        await turn

    await run.arefresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "exceeded its time limit of 1 s" in str(run.error)
    assert (await Agent.objects.aget(pk=agent.pk)).turn_lock_run_id is None
