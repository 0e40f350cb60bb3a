"""Handing a committed background run to its executor: a Celery worker, or this process.

Runs are enqueued only after the transaction that created them commits, and
carry nothing but their id. In the embedded default (``RUN_EXECUTOR=inprocess``)
the same ``agents.runs.execute.execute_queued`` runs on the server's event loop, so the
in-memory channel layer reaches the consumers of this process.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction

from agents.runs.execute import execute_queued
from agents.runs.tasks import execute_run_task

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from agents.models import Run

# Tasks are only weakly held by their loop: this set keeps running work alive until it ends.
_background_tasks: set[asyncio.Task[Any]] = set()
_server_loop: asyncio.AbstractEventLoop | None = None


def dispatch_on_commit(run: Run) -> None:
    """Hand ``run`` to its executor once the current transaction commits."""
    run_pk = run.pk
    # Dispatched from an empty context: called under a thread-sensitive ``sync_to_async`` (the
    # consumer), an in-process run would inherit asgiref's "single thread executor in use" guard.
    transaction.on_commit(lambda: contextvars.Context().run(_dispatch, run_pk))


def _dispatch(run_pk: Any) -> None:
    if settings.RUN_EXECUTOR == "celery":
        execute_run_task.delay(str(run_pk))
        return
    run_in_process(execute_queued(run_pk))


def bind_server_loop(app: Any, *, on_start: Callable[[], Coroutine[Any, Any, None]] | None = None) -> Any:
    """ASGI wrapper that remembers the server's event loop, where in-process runs execute,
    and starts ``on_start()`` there once (the embedded server's periodic upkeep)."""

    async def application(scope: Any, receive: Any, send: Any) -> Any:
        global _server_loop
        if _server_loop is None:
            _server_loop = asyncio.get_running_loop()
            if on_start is not None:
                run_in_background(on_start())
        return await app(scope, receive, send)

    return application


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The server's event loop once it serves (``bind_server_loop``); ``None`` in a worker, a shell or a test."""
    return _server_loop


def run_in_process(coroutine: Coroutine[Any, Any, None]) -> None:
    """Execute on the server's loop (so in-memory channel layer groups reach its consumers);
    without a server (a shell, a script), on a thread of its own."""
    loop = _server_loop
    if loop is not None and loop.is_running():
        # A fresh context: the caller's (a view or consumer under sync_to_async) holds asgiref's
        # thread-sensitive executor, which the run's own database calls must not inherit.
        loop.call_soon_threadsafe(run_in_background, coroutine, context=contextvars.Context())
        return
    threading.Thread(target=asyncio.run, args=(coroutine,), daemon=True, name="in-process-run").start()


def run_in_background(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Start ``coroutine`` on the running loop and keep it alive until it ends (tasks are weakly held)."""
    task = asyncio.get_running_loop().create_task(coroutine)
    _background_tasks.add(task)
    task.add_done_callback(_background_tasks.discard)
    return task
