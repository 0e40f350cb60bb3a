"""One SDK client (and its connection pool) per event loop and configuration.

Creating an SDK client builds an HTTP client and an SSL context (about 20 ms),
so our provider clients fetch a shared one here, and calls in one turn reuse
its connections. Pooled connections belong to the loop that opened them, so the
cache is keyed by the running loop: a Celery task's ``asyncio.run`` and a test's
loop never share sockets. Entries of closed loops are dropped on the next use;
``close_shared_clients()`` closes the running loop's clients cleanly and is worth
awaiting just before a loop ends.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

T = TypeVar("T")

_lock = threading.Lock()
_per_loop: dict[asyncio.AbstractEventLoop, dict[Hashable, Any]] = {}


def shared_sdk_client(key: Hashable, factory: Callable[[], T]) -> T:
    """The client for ``key`` on the running loop, made by ``factory`` the first time."""
    loop = asyncio.get_running_loop()
    with _lock:
        for closed in [other for other in _per_loop if other.is_closed()]:
            del _per_loop[closed]  # their sockets close when the clients are collected
        clients = _per_loop.setdefault(loop, {})
        if key not in clients:
            clients[key] = factory()
        client: T = clients[key]
    return client


async def close_shared_clients() -> None:
    """Close every SDK client of the running loop and forget them."""
    with _lock:
        clients = _per_loop.pop(asyncio.get_running_loop(), {})
    for client in clients.values():
        await client.close()
