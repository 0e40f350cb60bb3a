"""One Redis connection pool per process for Django's cache, whatever the thread.

Django keeps a cache backend per thread (and per async context), and its Redis
backend opens a connection pool per backend. Under ASGI every request runs its
sync code in a thread of its own, so each request built a pool and connected to
Redis again before its first cache read (the API throttle's): about 5 % of the web
process's time in the SDK benchmark's profile. ``CACHES["default"]["OPTIONS"]``
names this pool class, which hands every backend of the process the same pool
(redis-py's pools are thread-safe, and reset themselves in a forked child).
"""

from __future__ import annotations

import threading
from typing import Any

import redis

_pools: dict[tuple[str, str], redis.ConnectionPool] = {}
_pools_lock = threading.Lock()


class SharedConnectionPool(redis.ConnectionPool):
    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Any:
        """The process's pool for ``url`` and these options, made on first use."""
        key = (url, repr(sorted(kwargs.items())))
        with _pools_lock:
            pool = _pools.get(key)
            if pool is None:
                pool = _pools[key] = super().from_url(url, **kwargs)
        return pool
