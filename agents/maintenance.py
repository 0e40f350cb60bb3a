"""Periodic upkeep: end runs whose executor died, and deny approvals that waited too long.

Celery beat runs each as its own task in production (``CELERY_BEAT_SCHEDULE``). Every web
process also runs ``maintain_periodically`` on its loop (``config.asgi``), with or without beat
and workers, so a killed worker's run is ended within a sweep interval even where nobody runs
beat; both passes end a run or answer an approval with a conditional write, so they never clash.
The tasks keep the names they had before the layout moved them, so a schedule or a queued
message from an older release still finds them.
"""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async
from celery import shared_task
from django.conf import settings
from django.db import close_old_connections

from agents.approvals.expiry import expire_pending_approvals
from agents.runs.sweeper import sweep_stale_runs

logger = logging.getLogger(__name__)


@shared_task(name="agents.sweeper.sweep_stale_runs_task", ignore_result=True)
def sweep_stale_runs_task() -> int:
    return sweep_stale_runs()


@shared_task(name="agents.approval_expiry.expire_pending_approvals_task", ignore_result=True)
def expire_pending_approvals_task() -> int:
    return expire_pending_approvals()


def maintain() -> None:
    """One pass, on connections checked first: after a database restart the next pass reconnects."""
    close_old_connections()
    try:
        sweep_stale_runs()
        expire_pending_approvals()
    finally:
        close_old_connections()


async def maintain_periodically() -> None:
    """Every ``RUN_SWEEP_INTERVAL_SECONDS``, for as long as the server runs."""
    interval = settings.RUN_SWEEP_INTERVAL_SECONDS
    while True:
        await asyncio.sleep(interval)
        try:
            await sync_to_async(maintain, thread_sensitive=False)()
        except Exception:
            logger.exception("Periodic upkeep failed; trying again in %s s", interval)


def in_process_upkeep() -> bool:
    """Whether this server does the upkeep itself: always, unless ``RUN_SWEEP_INTERVAL_SECONDS`` is 0."""
    return bool(settings.RUN_SWEEP_INTERVAL_SECONDS > 0)
