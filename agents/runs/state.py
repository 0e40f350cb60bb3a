"""A run's state machine: the only writer of ``Run.status``, ``stop_reason``, ``error`` and
timings, and of the agent's turn lease.

::

    queued ──claim──▶ running ──end_run (the engine's verdict)──▶ completed | failed | cancelled
      │                  └──end_stale (the sweeper: no heartbeat)──▶ failed
      └──cancel──▶ cancelled    └──fail_unstarted / end_stale (never claimed)──▶ failed

Every transition is a conditional UPDATE that re-checks the state it leaves, so
two writers (a worker and the sweeper, two deliveries of one task) never both
move one run. Every end releases the agent's turn lease in the same
transaction, and is announced through ``agents.broadcast`` once committed: a
normal finish (after the run's own events), a REST cancel of a queued run and a
sweeper's verdict all reach every open tab the same way.

The turn lease is how the executing turn holds its agent (``agents.runs.store``): taken
with a conditional UPDATE when the turn opens, renewed with the run's heartbeat, released
when the run ends, so it holds across processes and machines and expires if its holder
crashes. Only an active run holds it; whether an agent is busy is the busy rule
(``RunQuerySet.busy_with``), not the lease.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.broadcast import announce_run_end, announce_run_end_on_commit
from agents.engine.events import RunFinishedEvent, TurnUsage
from agents.engine.stop import StopReason
from agents.models import ACTIVE_RUN_STATUSES, Agent, Conversation, Run, RunStatus
from agents.runs import writes

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agents.llm.base import Usage

logger = logging.getLogger(__name__)

# An end nobody streamed before (a queued run cancelled, a run refused before it started).
FIRST_EVENT_SEQ = 1
# The dead executor of a swept run may have published any number of events: this is after
# all of them, so every tab applies the verdict (and, seeing a gap, resyncs from the database).
SWEPT_EVENT_SEQ = 2**31 - 1


# --- the turn lease ------------------------------------------------------------------------


def lock_ttl() -> timedelta:
    """How long a turn lease lasts unless renewed (``AGENT_TURN_LOCK_SECONDS``, 20 s by default)."""
    return timedelta(seconds=settings.AGENT_TURN_LOCK_SECONDS)


def _thread(agent_id: Any, conversation_id: Any) -> QuerySet[Any]:
    """The row holding a thread's lease: the agent's for its default thread, else the conversation's."""
    if conversation_id is None:
        return Agent.objects.filter(pk=agent_id)
    return Conversation.objects.filter(pk=conversation_id, agent_id=agent_id)


def _free_for(run_id: Any, now: datetime) -> Q:
    return Q(turn_lock_run_id__isnull=True) | Q(turn_lock_expires_at__lt=now) | Q(turn_lock_run_id=run_id)


def take_lease(agent_id: Any, run_id: Any, conversation_id: Any = None) -> bool:
    """Take the thread's turn lease for ``run_id``: free, expired, or already this run's. Whether it was taken."""
    now = timezone.now()
    taken = (
        _thread(agent_id, conversation_id)
        .filter(_free_for(run_id, now))
        .update(turn_lock_run_id=run_id, turn_lock_expires_at=now + lock_ttl())
    )
    return taken == 1


def take_lease_write(agent_id: Any, run_id: Any, conversation_id: Any = None) -> writes.Write:
    """``take_lease``, compiled to be sent with other writes (``agents.runs.writes``): it took the lease
    when it counts one row."""
    now = timezone.now()
    model, thread = _thread_row(agent_id, conversation_id)
    free = ({"turn_lock_run_id__isnull": True}, {"turn_lock_expires_at__lt": now}, {"turn_lock_run_id": run_id})
    return writes.update_rows(
        model, thread, any_of=free, turn_lock_run_id=run_id, turn_lock_expires_at=now + lock_ttl()
    )


def release_lease_write(agent_id: Any, run_id: Any, conversation_id: Any = None) -> writes.Write:
    """``release_lease``, compiled to be sent with other writes."""
    model, thread = _thread_row(agent_id, conversation_id)
    return writes.update_rows(
        model, {**thread, "turn_lock_run_id": run_id}, turn_lock_run_id=None, turn_lock_expires_at=None
    )


def _thread_row(agent_id: Any, conversation_id: Any) -> tuple[type[Agent | Conversation], dict[str, Any]]:
    """``_thread`` for ``writes.update_rows``: the model and the conditions of the row holding the lease."""
    if conversation_id is None:
        return Agent, {"pk": agent_id}
    return Conversation, {"pk": conversation_id, "agent_id": agent_id}


def renew_lease(agent_id: Any, run_id: Any, conversation_id: Any = None) -> None:
    """Extend the thread's turn lease by ``lock_ttl()``, if ``run_id`` still holds it."""
    _thread(agent_id, conversation_id).filter(turn_lock_run_id=run_id).update(
        turn_lock_expires_at=timezone.now() + lock_ttl()
    )


def release_lease(agent_id: Any, run_id: Any, conversation_id: Any = None) -> None:
    """Give the thread's turn lease back, if ``run_id`` still holds it."""
    _thread(agent_id, conversation_id).filter(turn_lock_run_id=run_id).update(
        turn_lock_run_id=None, turn_lock_expires_at=None
    )


class LeaseRenewal:
    """Keeps a turn's lease (and its run's heartbeat) fresh for the whole turn, model calls included:
    every third of ``lock_ttl()``, on the running loop, until stopped."""

    def __init__(self, *, agent_id: Any, run_id: Any, conversation_id: Any = None) -> None:
        self.agent_id = agent_id
        self.run_id = run_id
        self.conversation_id = conversation_id
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renew())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _renew(self) -> None:
        interval = lock_ttl().total_seconds() / 3
        while True:
            await asyncio.sleep(interval)
            await sync_to_async(heartbeat)(self.run_id, self.agent_id, renew=True, conversation_id=self.conversation_id)


# --- starting ------------------------------------------------------------------------------


def claim(run_pk: Any) -> Run | None:
    """Take a queued run for execution (exactly once, whatever the number of deliveries)."""
    now = timezone.now()
    claimed = Run.objects.filter(pk=run_pk, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=now, heartbeat_at=now
    )
    if claimed != 1:
        return None
    return Run.objects.select_related("agent", "agent__organization", "created_by", "api_key").get(pk=run_pk)


def claim_created(run: Run) -> Run | None:
    """``claim`` for a run this request has just created and holds: the same guarded update,
    but the run, its agent and its sender are the objects in hand, so nothing is read back."""
    now = timezone.now()
    claimed = Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=now, heartbeat_at=now
    )
    if claimed != 1:
        return None
    run.status, run.started_at, run.heartbeat_at = RunStatus.RUNNING, now, now
    return run


def heartbeat(run_pk: Any, agent_pk: Any, *, renew: bool, conversation_id: Any = None) -> bool:
    """Record that a running run is alive and renew its thread's lease (with ``renew``);
    return whether it has been asked to stop."""
    if renew:
        renew_lease(agent_pk, run_pk, conversation_id)
        Run.objects.filter(pk=run_pk).update(heartbeat_at=timezone.now())
    return Run.objects.filter(pk=run_pk, cancel_requested_at__isnull=False).exists()


# --- ending --------------------------------------------------------------------------------


def end_writes(
    run_pk: Any,
    agent_pk: Any,
    conversation_id: Any,
    *,
    stop_reason: str,
    usage: Usage,
    step_count: int,
    error: str | None,
) -> list[writes.Write]:
    """A run's end as writes to send together (``agents.runs.writes``): the lease's release, then the
    verdict, which counts one row when it was recorded (a run the sweeper ended keeps its own)."""
    verdict = writes.update_rows(
        Run,
        {"pk": run_pk, "status__in": tuple(ACTIVE_RUN_STATUSES)},
        status=StopReason(stop_reason).run_status,
        stop_reason=stop_reason,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
        step_count=step_count,
        error={"message": error} if error else None,
        completed_at=timezone.now(),
    )
    return [release_lease_write(agent_pk, run_pk, conversation_id), verdict]


def _record_end(
    run_pk: Any,
    agent_pk: Any,
    conversation_id: Any,
    finished: RunFinishedEvent,
    usage: Usage,
    also: Sequence[writes.Write],
) -> bool:
    end = end_writes(
        run_pk,
        agent_pk,
        conversation_id,
        stop_reason=finished.stop_reason,
        usage=usage,
        step_count=finished.usage.step_count,
        error=finished.error,
    )
    _, counts = writes.write_together([*also, *end])
    return counts[-1] == 1


async def end_run(
    *,
    run_pk: Any,
    agent_pk: Any,
    finished: RunFinishedEvent,
    usage: Usage,
    conversation_id: Any = None,
    also: Sequence[writes.Write] = (),
) -> None:
    """Record the engine's verdict on a run, release the agent, and announce the end
    (``agents.broadcast.announce_run_end``: after the run's own events when it executes here).
    ``also`` is sent with them, in one statement (the store's last step).

    A run the sweeper ended meanwhile keeps the sweeper's verdict (and is not announced twice).
    """
    if await sync_to_async(_record_end)(run_pk, agent_pk, conversation_id, finished, usage, also):
        await announce_run_end(agent_pk, finished, conversation_id=conversation_id)


async def announce_end(agent_pk: Any, finished: RunFinishedEvent, *, conversation_id: Any = None) -> None:
    """Announce an end recorded already with the turn's last rows (``end_writes``)."""
    await announce_run_end(agent_pk, finished, conversation_id=conversation_id)


def fail_unstarted(run: Run, detail: str) -> RunFinishedEvent:
    """End a claimed run that could not start (its input refused, its provider unusable…) as failed."""
    finished = RunFinishedEvent(run_id=run.pk, seq=FIRST_EVENT_SEQ, stop_reason=StopReason.ERROR, error=detail)
    with transaction.atomic():
        release_lease(run.agent_id, run.pk, run.conversation_id)
        ended = Run.objects.filter(pk=run.pk, status__in=ACTIVE_RUN_STATUSES).update(
            status=RunStatus.FAILED,
            stop_reason=StopReason.ERROR,
            error={"message": detail},
            completed_at=timezone.now(),
        )
    if ended == 1:
        announce_run_end_on_commit(run.agent_id, finished, conversation_id=run.conversation_id)
    return finished


def cancel(run: Run) -> Run:
    """Ask a run to stop (always accepted). A running run stops at its next check and ends
    ``cancelled`` through ``end_run``; one that has not started is cancelled now, and announced."""
    now = timezone.now()
    with transaction.atomic():
        Run.objects.filter(pk=run.pk, cancel_requested_at__isnull=True).update(cancel_requested_at=now)
        cancelled = Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
            status=RunStatus.CANCELLED, stop_reason=StopReason.CANCELLED, completed_at=now
        )
    if cancelled == 1:
        finished = RunFinishedEvent(run_id=run.pk, seq=FIRST_EVENT_SEQ, stop_reason=StopReason.CANCELLED)
        announce_run_end_on_commit(run.agent_id, finished, conversation_id=run.conversation_id)
    run.refresh_from_db()
    return run


def cancel_agent_runs(
    *, agent: Agent, run_ids: list[str] | None = None, conversation: Conversation | None = None
) -> list[Run]:
    """Cancel the agent's active runs, in every thread (only ``run_ids`` when given, only those of
    ``conversation`` when given); the runs asked to stop."""
    runs = Run.objects.for_org(agent.organization_id).filter(agent=agent).active()
    if conversation is not None:
        runs = runs.filter(conversation=conversation)
    if run_ids:
        runs = runs.filter(pk__in=[pk for pk in (Run.parse_public_id(r) for r in run_ids) if pk])
    return [cancel(run) for run in runs]


def end_stale(run: Run, *, condition: Q, error: str, now: datetime) -> bool:
    """The sweeper's verdict on a run whose executor is gone: failed, if ``condition`` still holds.

    Its cancel flag is set too: should its worker be alive after all, it stops at its
    next check instead of writing into a failed run.
    """
    with transaction.atomic():
        ended = Run.objects.filter(condition, pk=run.pk).update(
            status=RunStatus.FAILED,
            stop_reason=StopReason.ERROR,
            error={"message": error},
            completed_at=now,
            cancel_requested_at=Coalesce(F("cancel_requested_at"), Value(now)),
        )
        if ended != 1:
            return False
        release_lease(run.agent_id, run.pk, run.conversation_id)
    finished = RunFinishedEvent(
        run_id=run.pk, seq=SWEPT_EVENT_SEQ, stop_reason=StopReason.ERROR, usage=TurnUsage(), error=error
    )
    announce_run_end_on_commit(run.agent_id, finished, conversation_id=run.conversation_id)
    return True
