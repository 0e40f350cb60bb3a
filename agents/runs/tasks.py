"""Celery tasks: thin adapters that take ids and call the run executor."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from celery import shared_task
from django.conf import settings

from agents.runs.execute import execute_queued


@shared_task(
    name="agents.tasks.execute_run_task",  # its name before the layout moved it: queued messages still find it
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    # A backstop behind the run's own deadline (``agents.runs.execute``): a worker stuck past it is
    # replaced, and the sweeper ends its run as failed.
    time_limit=settings.RUN_TIME_LIMIT_SECONDS + 120,
)
def execute_run_task(run_id: str) -> None:
    """Execute a queued run. A duplicate delivery finds the run already claimed and does nothing."""
    async_to_sync(execute_queued)(run_id)
