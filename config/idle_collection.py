"""Garbage collection between requests rather than inside them.

Every request leaves a few hundred objects in reference cycles (Django's request and its
message and session storages, the disconnect listener's ``RequestAborted`` traceback), and
only the cyclic collector frees them. Left to its thresholds (``config/asgi.py``), it
collects the young generation when 50,000 have piled up, and that collection pauses
whichever request is running for 40-55 ms: a turn's p99 was 2.3 times its p50, and these
pauses were most of the tail (``benchmarks/gc_probe.py``).

``CollectWhenIdle`` collects the young generation as soon as the process has no HTTP request
in flight, after the last response went out, when there are a few hundred objects to walk
(a fraction of a millisecond), and the middle generation when it is due. The oldest is left
to the collector's own rule, which weighs what is pending against what is long-lived. A
process that is never idle (requests always overlap) is collected by the thresholds as before.
"""

from __future__ import annotations

import asyncio
import gc
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    # Django's handler and the tests' apps type scope, receive and send each their own way.
    ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

#: Fewer young objects than this are not worth a collection of their own.
MIN_YOUNG_OBJECTS = 200


class CollectWhenIdle:
    """Wraps an HTTP ASGI application; collects the young generations when no request is in flight."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.in_flight = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            if not self.in_flight:
                # After the callbacks already queued, the response's last bytes among them.
                asyncio.get_running_loop().call_soon(self.collect_if_idle)

    def collect_if_idle(self) -> None:
        young_threshold, middle_threshold, _ = gc.get_threshold()
        if self.in_flight or not gc.isenabled() or not young_threshold:
            return  # busy again, or automatic collection is off (``GC_THRESHOLD=0``)
        young, middle, _ = gc.get_count()
        if middle >= middle_threshold:
            gc.collect(1)
        elif young >= MIN_YOUNG_OBJECTS:
            gc.collect(0)
