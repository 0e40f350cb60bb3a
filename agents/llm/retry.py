"""The one place model calls are retried.

Only ``LLMError``s marked ``retryable`` (rate limit, overloaded, connection) are
retried, and only while nothing has been yielded: once an event is out, a retry
would duplicate streamed output, so the error goes to the engine as is.
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

from agents.llm.base import LLMError, LLMRateLimited

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from agents.llm.base import LLMClient, LLMEvent, LLMRequest

DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BASE_DELAY = 0.5
DEFAULT_MAX_DELAY = 20.0


class RetryingClient:
    """Wraps an ``LLMClient``; same interface, with bounded retries and backoff.

    The delay before attempt ``n + 1`` is ``base_delay * 2 ** (n - 1)`` (plus up to
    ``jitter`` of it), capped at ``max_delay``. A rate limit's ``Retry-After`` is
    honoured instead; when it asks for longer than ``max_delay`` the error is
    raised rather than waited out.
    """

    def __init__(
        self,
        inner: LLMClient,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        base_delay: float = DEFAULT_BASE_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
        jitter: float = 0.1,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.max_attempts = max(1, max_attempts)
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.jitter = jitter
        self._sleep = sleep

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        return self.inner.build_payload(request, stream=stream)

    async def generate(self, request: LLMRequest, *, stream: bool) -> AsyncIterator[LLMEvent]:
        attempt = 1
        while True:
            yielded = False
            try:
                async for event in self.inner.generate(request, stream=stream):
                    yielded = True
                    yield event
                return
            except LLMError as error:
                delay = self.delay_before_retry(error, attempt=attempt, yielded=yielded)
                if delay is None:
                    raise
            await self._sleep(delay)
            attempt += 1

    def delay_before_retry(self, error: LLMError, *, attempt: int, yielded: bool) -> float | None:
        """Seconds to wait before trying again after ``error``; ``None`` means give up."""
        if yielded or not error.retryable or attempt >= self.max_attempts:
            return None
        if isinstance(error, LLMRateLimited) and error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_delay else None
        backoff: float = self.base_delay * 2 ** (attempt - 1)  # int ** int is typed Any
        return min(self.max_delay, backoff * (1 + self.jitter * random.random()))


def with_retries(
    client: LLMClient,
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    base_delay: float = DEFAULT_BASE_DELAY,
    max_delay: float = DEFAULT_MAX_DELAY,
) -> RetryingClient:
    """``client`` with bounded retries of transient errors (never after output was yielded)."""
    if isinstance(client, RetryingClient):
        client = client.inner
    return RetryingClient(client, max_attempts=max_attempts, base_delay=base_delay, max_delay=max_delay)
