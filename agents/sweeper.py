"""End runs whose executor died, so no run stays "running" and no agent stays locked.

A live run refreshes ``Run.heartbeat_at`` together with the agent's turn lease
(``agents.conversation``: every third of ``AGENT_TURN_LOCK_SECONDS`` while it
streams, steps or runs tools). A run whose heartbeat is older than
``stale_after()`` (twice the lease, 120 s by default; ``RUN_STALE_SECONDS``
overrides it) lost its executor: a killed Celery worker, a restarted server.
The sweeper marks it failed with a clear error, releases the lease it held and
tells the agent's tabs. A queued run nobody claimed is swept the same way once
it is older than ``queue_timeout()``.

Celery beat calls ``sweep_stale_runs_task`` every ``SWEEP_INTERVAL_SECONDS``; the
chat also sweeps before it queues a run and when a tab resyncs.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from asgiref.sync import async_to_sync
from celery import shared_task
from django.conf import settings
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.broadcast import event_payload, publish
from agents.conversation import lock_ttl
from agents.engine.events import RunFinishedEvent, TurnUsage
from agents.models import Agent, Run, RunStatus, StopReason

if TYPE_CHECKING:
    from django.db.models import QuerySet

logger = logging.getLogger(__name__)

SWEEP_INTERVAL_SECONDS = 30.0
DEFAULT_QUEUE_TIMEOUT = timedelta(minutes=10)
# The dead executor may have published any number of events: this is after all of them,
# so every tab applies the verdict (and, seeing a gap, resyncs from the database).
SWEPT_EVENT_SEQ = 2**31 - 1
STALE_ERROR = (
    "The worker running this turn stopped responding (no heartbeat for {seconds} s), so the run was ended. "
    "Anything it saved is kept; Retry continues from there."
)
UNCLAIMED_ERROR = "No worker picked this run up within {seconds} s, so it was ended. Retry to send it again."


def stale_after() -> timedelta:
    """How old a running run's heartbeat may get before its executor is presumed dead."""
    seconds = getattr(settings, "RUN_STALE_SECONDS", None)
    return timedelta(seconds=seconds) if seconds else 2 * lock_ttl()


def queue_timeout() -> timedelta:
    """How long a run may wait for an executor. In-process runs are claimed at once unless the server died."""
    seconds = getattr(settings, "RUN_QUEUE_TIMEOUT_SECONDS", None)
    if seconds:
        return timedelta(seconds=seconds)
    return stale_after() if settings.RUN_EXECUTOR == "inprocess" else DEFAULT_QUEUE_TIMEOUT


def _stale_running(cutoff: datetime) -> Q:
    return Q(status=RunStatus.RUNNING) & (
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )


def _unclaimed(cutoff: datetime) -> Q:
    return Q(status=RunStatus.QUEUED, created_at__lt=cutoff)


def sweep_stale_runs(now: datetime | None = None) -> int:
    """Fail every run whose executor is gone; returns how many were ended.

    Each run is ended with a conditional update that re-checks its staleness, so a
    run that heart-beats (or finishes) meanwhile is left alone and two sweepers never
    both end one run. Its cancel flag is set too: should its worker be alive after
    all, it stops at its next check instead of writing into a failed run.
    """
    now = now or timezone.now()
    stale_cutoff, queue_cutoff = now - stale_after(), now - queue_timeout()
    condition = _stale_running(stale_cutoff) | _unclaimed(queue_cutoff)
    candidates: QuerySet[Run] = Run.objects.filter(condition).only("pk", "agent_id", "status")
    swept = 0
    for run in candidates:
        was_running = run.status == RunStatus.RUNNING
        template = STALE_ERROR if was_running else UNCLAIMED_ERROR
        limit = stale_after() if was_running else queue_timeout()
        error = template.format(seconds=int(limit.total_seconds()))
        ended = Run.objects.filter(condition, pk=run.pk).update(
            status=RunStatus.FAILED,
            stop_reason=StopReason.ERROR.value,
            error={"message": error},
            completed_at=now,
            cancel_requested_at=Coalesce(F("cancel_requested_at"), Value(now)),
        )
        if ended != 1:
            continue
        swept += 1
        Agent.objects.filter(pk=run.agent_id, turn_lock_run_id=run.pk).update(
            turn_lock_run_id=None, turn_lock_expires_at=None
        )
        logger.warning("Swept run %s of agent %s: %s", run.pk, run.agent_id, error)
        verdict = RunFinishedEvent(
            run_id=run.pk, seq=SWEPT_EVENT_SEQ, stop_reason=StopReason.ERROR.value, usage=TurnUsage(), error=error
        )
        try:
            async_to_sync(publish)(run.agent_id, [event_payload(verdict)])
        except Exception:
            # The run is ended either way; a tab that missed the verdict reads it when it resyncs.
            logger.exception("Could not tell the tabs of agent %s that run %s was swept", run.agent_id, run.pk)
    return swept


@shared_task(ignore_result=True)
def sweep_stale_runs_task() -> int:
    """Celery beat's entry point (``config.celery``)."""
    return sweep_stale_runs()
