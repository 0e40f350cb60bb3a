"""Executing a run: open its turn, announce every event to the agent's group, and yield it.

Every run goes through here: the blocking and streamed REST calls execute inline
(``start_inline``), the chat's and ``messages/async``'s runs in a worker or this
process (``execute_queued``, called by ``agents.runs.tasks`` and ``agents.runs.dispatch``).
So every open tab sees every run live, whichever transport started it. While the run
executes, its ``agents.broadcast.RunAnnouncer`` is open: it announces the run's events,
and, in their place in the run's order, its end (recorded by ``agents.runs.state``) and
the memory edits of its tools.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction

from agents.broadcast import RunAnnouncer
from agents.engine.events import RunFinishedEvent
from agents.engine.inputs import TurnRequest
from agents.engine.stop import StopReason
from agents.errors import ApplicationError, Conflict
from agents.models import RunStatus
from agents.runs import state as run_state
from agents.runs.turns import open_turn, turn_setup

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from agents.engine.events import EngineEvent
    from agents.engine.loop import Turn
    from agents.llm.base import LLMClient
    from agents.models import Run
    from tools.base import ToolRunner

logger = logging.getLogger(__name__)

TIME_LIMIT_ERROR = "The run exceeded its time limit of {seconds} s and was ended."


class RunNotStarted(Conflict):
    default_detail = "CONFLICT: The run was cancelled before it started."


@dataclass
class RunExecution:
    """A run whose turn is open: iterate ``events()`` to execute it."""

    run: Run
    turn: Turn

    @property
    def run_id(self) -> Any:
        return self.run.pk

    async def events(self) -> AsyncIterator[EngineEvent]:
        """The turn's events, each announced to the agent's group before it is yielded.

        The run ends as failed once it passes ``RUN_TIME_LIMIT_SECONDS``.
        """
        limit = settings.RUN_TIME_LIMIT_SECONDS
        task = asyncio.current_task()
        assert task is not None
        deadline = asyncio.get_running_loop().call_later(limit, self._time_out, task, limit)
        try:
            async with RunAnnouncer(
                run_id=self.run.pk, agent_id=self.run.agent_id, conversation_id=self.run.conversation_id
            ) as announcer:
                async for event in self.turn.events():
                    if not isinstance(event, RunFinishedEvent):  # announced once recorded, by run_state
                        await announcer.announce(event)
                    yield event
        finally:
            deadline.cancel()

    def _time_out(self, task: asyncio.Task[Any], limit: int) -> None:
        self.turn.interrupt(StopReason.ERROR, TIME_LIMIT_ERROR.format(seconds=limit))
        task.cancel()


async def _open(
    run: Run, request: TurnRequest, *, stream_tokens: bool, llm: LLMClient | None, tool_runner: ToolRunner | None
) -> RunExecution:
    setup = turn_setup(run, request, stream_tokens=stream_tokens, llm=llm, tool_runner=tool_runner)
    return RunExecution(run=run, turn=await open_turn(setup))


async def start_inline(
    run: Run,
    request: TurnRequest,
    *,
    stream_tokens: bool,
    llm: LLMClient | None = None,
    tool_runner: ToolRunner | None = None,
) -> RunExecution:
    """Claim a run the caller executes itself and open its turn.

    Raises the engine's domain errors (a pending approval, an invalid answer…) before
    anything is streamed; the refused run is deleted, as it never started.
    """
    # A run ``run_start`` created for this request is running already, holding its thread's lease.
    running = run.status == RunStatus.RUNNING
    claimed = run if running else await sync_to_async(run_state.claim_created)(run)
    if claimed is None:
        raise RunNotStarted()
    try:
        return await _open(claimed, request, stream_tokens=stream_tokens, llm=llm, tool_runner=tool_runner)
    except ApplicationError:
        await sync_to_async(_discard)(claimed)
        raise
    except Exception as exc:
        await sync_to_async(run_state.fail_unstarted)(claimed, f"{type(exc).__name__}: {exc}")
        raise


def _discard(run: Run) -> None:
    """Delete a run refused before it started, and give back the lease it may hold."""
    with transaction.atomic():
        run_state.release_lease(run.agent_id, run.pk, run.conversation_id)
        run.delete()


async def execute_queued(run_pk: Any) -> None:
    """Claim a queued run and execute it to its end. Idempotent: a run already claimed is left alone."""
    run = await sync_to_async(run_state.claim)(run_pk)
    if run is None:
        return
    try:
        request = TurnRequest.model_validate(run.request)
        execution = await _open(run, request, stream_tokens=True, llm=None, tool_runner=None)
    except Exception as exc:
        # Refused before it started (a domain error, a provider without a key…): the run fails with why.
        if not isinstance(exc, ApplicationError):
            logger.warning("Run %s could not start: %s", run.pk, exc, exc_info=True)
        detail = exc.detail if isinstance(exc, ApplicationError) else f"{type(exc).__name__}: {exc}"
        await sync_to_async(run_state.fail_unstarted)(run, str(_message_of(detail)))
        return
    async for _event in execution.events():
        pass


def _message_of(detail: Any) -> Any:
    return detail.get("message", detail) if isinstance(detail, dict) else detail
