"""Periodic upkeep: end runs whose executor died, and deny approvals that waited too long.

Celery beat runs each as its own task in production (``config.celery``). The embedded
server has no beat: ``config.asgi`` runs ``maintain_periodically`` on the server's loop.
"""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async
from django.conf import settings

from agents.approval_expiry import expire_pending_approvals
from agents.sweeper import sweep_stale_runs

logger = logging.getLogger(__name__)


def maintain() -> None:
    sweep_stale_runs()
    expire_pending_approvals()


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
    """Whether this server must do the upkeep itself (runs in-process, so no Celery beat)."""
    return bool(settings.RUN_EXECUTOR == "inprocess" and settings.RUN_SWEEP_INTERVAL_SECONDS > 0)
