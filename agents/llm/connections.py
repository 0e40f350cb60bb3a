"""One SDK client (and its connection pool) per event loop and configuration.

Creating an SDK client builds an HTTP client and an SSL context, which costs far
more than a request to a local server, so our provider clients fetch a shared one
here. Pooled connections belong to the loop that opened them, so the cache is
keyed by the running loop: a Celery task's ``asyncio.run`` and a test's loop never
share sockets, and a closed loop's entries go away with it.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

T = TypeVar("T")

_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, Any]] = weakref.WeakKeyDictionary()


def shared_sdk_client(key: Hashable, factory: Callable[[], T]) -> T:
    """The client for ``key`` on the running loop, made by ``factory`` the first time."""
    loop = asyncio.get_running_loop()
    clients = _per_loop.setdefault(loop, {})
    if key not in clients:
        clients[key] = factory()
    client: T = clients[key]
    return client
