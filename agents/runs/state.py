"""A run's state machine: the only writer of ``Run.status``, ``stop_reason``, ``error`` and
timings, and the only announcer of a run's end to the agent's open tabs.

::

    queued ──claim──▶ running ──end_run (the engine's verdict)──▶ completed | failed | cancelled
      │                  └──end_stale (the sweeper: no heartbeat)──▶ failed
      └──cancel──▶ cancelled    └──fail_unstarted / end_stale (never claimed)──▶ failed

Every transition is a conditional UPDATE that re-checks the state it leaves, so
two writers (a worker and the sweeper, two deliveries of one task) never both
move one run. Every end releases the agent's turn lease in the same
transaction, and is announced to the agent's group after it commits: a
normal finish, a REST cancel of a queued run and a sweeper's verdict all reach
every open tab the same way.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.broadcast import event_payload, publish
from agents.engine.events import RunFinishedEvent, TurnUsage
from agents.engine.stop import StopReason
from agents.models import Agent, Run, RunStatus
from agents.selectors import pending_approval_row

if TYPE_CHECKING:
    from agents.broadcast import EventPublisher
    from agents.llm.base import Usage

logger = logging.getLogger(__name__)

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING)
# An end nobody streamed before (a queued run cancelled, a run refused before it started).
FIRST_EVENT_SEQ = 1
# The dead executor of a swept run may have published any number of events: this is after
# all of them, so every tab applies the verdict (and, seeing a gap, resyncs from the database).
SWEPT_EVENT_SEQ = 2**31 - 1


def _release_lease(agent_pk: Any, run_pk: Any) -> None:
    Agent.objects.filter(pk=agent_pk, turn_lock_run_id=run_pk).update(turn_lock_run_id=None, turn_lock_expires_at=None)


def _announce_on_commit(agent_pk: Any, finished: RunFinishedEvent) -> None:
    """Announce an end the engine did not see, once the end is committed (at once outside a transaction).

    The payload says whether an approval still waits, so tabs need not work it out.
    """

    def send() -> None:
        try:
            agent = Agent.objects.get(pk=agent_pk)
            awaiting = pending_approval_row(agent)
            verdict = replace(finished, awaiting_approval=awaiting.snapshot() if awaiting else None)
            async_to_sync(publish)(agent_pk, [event_payload(verdict)])
        except Exception:
            # The run is ended either way; a tab that missed the verdict reads it when it resyncs.
            logger.exception("Could not tell the tabs of agent %s that run %s ended", agent_pk, finished.run_id)

    transaction.on_commit(send)


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


def heartbeat(run_pk: Any, agent_pk: Any, *, renew_lease_until: datetime | None) -> bool:
    """Record that a running run is alive (renewing the agent's lease when given a new expiry);
    return whether it has been asked to stop."""
    if renew_lease_until is not None:
        Agent.objects.filter(pk=agent_pk, turn_lock_run_id=run_pk).update(turn_lock_expires_at=renew_lease_until)
        Run.objects.filter(pk=run_pk).update(heartbeat_at=timezone.now())
    return Run.objects.filter(pk=run_pk, cancel_requested_at__isnull=False).exists()


# --- ending --------------------------------------------------------------------------------


def _record_end(run_pk: Any, agent_pk: Any, finished: RunFinishedEvent, usage: Usage) -> bool:
    with transaction.atomic():
        _release_lease(agent_pk, run_pk)
        ended = Run.objects.filter(pk=run_pk, status__in=ACTIVE).update(
            status=StopReason(finished.stop_reason).run_status,
            stop_reason=finished.stop_reason,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            step_count=finished.usage.step_count,
            error={"message": finished.error} if finished.error else None,
            completed_at=timezone.now(),
        )
    return ended == 1


async def end_run(
    *, run_pk: Any, agent_pk: Any, finished: RunFinishedEvent, usage: Usage, publisher: EventPublisher | None
) -> None:
    """Record the engine's verdict on a run, release the agent, and announce the end.

    ``publisher`` is the run's own publisher when its events go to the agent's group:
    the end then follows the run's last deltas in order. A run the sweeper ended
    meanwhile keeps the sweeper's verdict (and is not announced twice).
    """
    if not await sync_to_async(_record_end)(run_pk, agent_pk, finished, usage):
        return
    if publisher is not None:
        await publisher.publish(finished)
        await publisher.flush()
    else:
        await publish(agent_pk, [event_payload(finished)])


def fail_unstarted(run: Run, detail: str) -> RunFinishedEvent:
    """End a claimed run that could not start (its input refused, its provider unusable…) as failed."""
    finished = RunFinishedEvent(run_id=run.pk, seq=FIRST_EVENT_SEQ, stop_reason=StopReason.ERROR, error=detail)
    with transaction.atomic():
        _release_lease(run.agent_id, run.pk)
        ended = Run.objects.filter(pk=run.pk, status__in=ACTIVE).update(
            status=RunStatus.FAILED,
            stop_reason=StopReason.ERROR,
            error={"message": detail},
            completed_at=timezone.now(),
        )
    if ended == 1:
        _announce_on_commit(run.agent_id, finished)
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
        _announce_on_commit(run.agent_id, finished)
    run.refresh_from_db()
    return run


def cancel_agent_runs(*, agent: Agent, run_ids: list[str] | None = None) -> list[Run]:
    """Cancel the agent's active runs (only ``run_ids`` when given); the runs asked to stop."""
    runs = Run.objects.for_org(agent.organization_id).filter(agent=agent).active()
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
        _release_lease(run.agent_id, run.pk)
    finished = RunFinishedEvent(
        run_id=run.pk, seq=SWEPT_EVENT_SEQ, stop_reason=StopReason.ERROR, usage=TurnUsage(), error=error
    )
    _announce_on_commit(run.agent_id, finished)
    return True
