"""Celery tasks: thin adapters that take ids and call the run executor."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from celery import shared_task

from agents.runs import execute_run


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def execute_run_task(run_id: str) -> None:
    """Execute a queued run. A duplicate delivery finds the run already claimed and does nothing."""
    async_to_sync(execute_run)(run_id)
