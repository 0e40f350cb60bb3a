"""End runs whose executor died, so no run stays "running" and no agent stays locked.

A live run refreshes ``Run.heartbeat_at`` together with the agent's turn lease
(``agents.runs.state.LeaseRenewal``: every third of ``AGENT_TURN_LOCK_SECONDS`` while it
streams, steps or runs tools). A run whose heartbeat is older than
``stale_after()`` (twice the lease, 40 s by default; ``RUN_STALE_SECONDS``
overrides it) lost its executor: a killed Celery worker, a restarted server.
The sweeper picks it out; ``agents.runs.state.end_stale`` fails it with a clear error,
releases the lease it held and tells the agent's tabs. A queued run nobody claimed is swept the same way once
it is older than ``queue_timeout()``.

Every web process calls it every ``RUN_SWEEP_INTERVAL_SECONDS`` (15 s), and so does Celery beat
(``agents.maintenance``): a dead worker's run ends within a minute. Starting a run sweeps
that agent's runs first, and so does a tab that resyncs.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from agents.models import Run, RunStatus
from agents.runs import state as run_state

if TYPE_CHECKING:
    from django.db.models import QuerySet

logger = logging.getLogger(__name__)

DEFAULT_QUEUE_TIMEOUT = timedelta(minutes=10)
STALE_ERROR = (
    "The worker running this turn stopped responding (no heartbeat for {seconds} s), so the run was ended. "
    "Anything it saved is kept; Retry continues from there."
)
UNCLAIMED_ERROR = "No worker picked this run up within {seconds} s, so it was ended. Retry to send it again."


def stale_after() -> timedelta:
    """How old a running run's heartbeat may get before its executor is presumed dead."""
    seconds = getattr(settings, "RUN_STALE_SECONDS", None)
    return timedelta(seconds=seconds) if seconds else 2 * run_state.lock_ttl()


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


def sweep_stale_runs(*, agent_id: Any = None, now: datetime | None = None) -> int:
    """End every run whose executor is gone (only ``agent_id``'s when given); returns how many.

    ``agents.runs.state.end_stale`` ends each with a conditional update that re-checks its
    staleness, so a run that heart-beats (or finishes) meanwhile is left alone and two
    sweepers never both end one run.
    """
    now = now or timezone.now()
    condition = _stale_running(now - stale_after()) | _unclaimed(now - queue_timeout())
    candidates: QuerySet[Run] = Run.objects.filter(condition).only("pk", "agent_id", "conversation_id", "status")
    if agent_id is not None:
        candidates = candidates.filter(agent_id=agent_id)
    swept = 0
    for run in candidates:
        was_running = run.status == RunStatus.RUNNING
        template = STALE_ERROR if was_running else UNCLAIMED_ERROR
        limit = stale_after() if was_running else queue_timeout()
        error = template.format(seconds=int(limit.total_seconds()))
        if run_state.end_stale(run, condition=condition, error=error, now=now):
            swept += 1
            logger.warning("Swept run %s of agent %s: %s", run.pk, run.agent_id, error)
    return swept
