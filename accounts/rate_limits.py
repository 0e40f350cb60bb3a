"""API rate limits counted in O(1): a sliding window estimated from two fixed windows' counters.

DRF's ``SimpleRateThrottle`` keeps every request's timestamp of the last window in one cache
value, read and written whole on each request: at ``API_RATE_LIMIT``'s 6,000 a minute a busy
key's value holds thousands of floats, pickled both ways on every call. This counts instead:
the current window's counter is incremented, and the rate is the current count plus the
previous window's, weighted by how much of it still lies within the last ``duration`` seconds
(the estimate Cloudflare and others use). A refused request is taken back, so it does not count.

On Redis the increment, its expiry and the read of the previous window are one pipelined round
trip; on any other cache (the in-memory one of the embedded settings) they are plain cache calls.
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework import throttling

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.views import APIView


class CountingRateThrottle(throttling.SimpleRateThrottle):
    """``SimpleRateThrottle``'s rates and cache keys (``get_cache_key``), counted by ``allow_request`` below."""

    num_requests: int  # both set by ``SimpleRateThrottle.__init__`` from the rate
    duration: int

    def allow_request(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        self.now = self.timer()
        window = int(self.now // self.duration)
        current_key, previous_key = f"{key}:{window}", f"{key}:{window - 1}"
        current, previous = self._count(current_key, previous_key)
        elapsed_share = (self.now - window * self.duration) / self.duration
        if previous * (1.0 - elapsed_share) + current <= self.num_requests:
            return True
        self._take_back(current_key)
        return False

    def wait(self) -> float | None:
        """Seconds until the estimate falls back under the rate (at most the rest of this window)."""
        window_end = (self.now // self.duration + 1) * self.duration
        return float(max(1, math.ceil(window_end - self.now)))

    def _count(self, current_key: str, previous_key: str) -> tuple[int, int]:
        """This request counted in the current window: ``(current count, previous window's count)``."""
        cache: Any = caches["default"]  # the backend itself (DRF's ``cache`` is a proxy of it)
        if isinstance(cache, RedisCache) and len(getattr(cache._cache, "_servers", ())) == 1:
            current_name = cache.make_and_validate_key(current_key)
            client = cache._cache.get_client(current_name, write=True)
            pipeline = client.pipeline(transaction=False)
            pipeline.incr(current_name)
            pipeline.expire(current_name, 2 * self.duration)
            pipeline.get(cache.make_and_validate_key(previous_key))
            current, _, previous = pipeline.execute()
            return int(current), int(previous or 0)
        cache.add(current_key, 0, 2 * self.duration)
        current = cache.incr(current_key)
        return int(current), int(cache.get(previous_key) or 0)

    def _take_back(self, current_key: str) -> None:
        with contextlib.suppress(ValueError):  # expired in between: nothing to take back
            caches["default"].decr(current_key)
