"""Handing a committed file to its executor (``FOLDERS_PROCESSING``), and the Celery task.

``celery``: a worker runs it (deployments with Redis); ``thread``: a thread of this process (the
embedded server); ``inline``: right here, before the request answers (tests).
"""

from __future__ import annotations

import threading
from typing import Any

from celery import shared_task
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connections

from folders.processing import process_file


@shared_task(name="folders.process_file", acks_late=True, ignore_result=True)
def process_file_task(file_pk: str) -> None:
    process_file(file_pk)


def dispatch(file_pk: Any) -> None:
    mode = settings.FOLDERS_PROCESSING
    if mode == "celery":
        process_file_task.delay(str(file_pk))
    elif mode == "thread":
        threading.Thread(target=_in_thread, args=(file_pk,), daemon=True, name=f"file-{file_pk}").start()
    elif mode == "inline":
        process_file(file_pk)
    else:
        raise ImproperlyConfigured(f"FOLDERS_PROCESSING must be celery, thread or inline, not {mode!r}")


def _in_thread(file_pk: Any) -> None:
    try:
        process_file(file_pk)
    finally:
        connections.close_all()  # this thread ends: its connections are closed, not left for the pool
