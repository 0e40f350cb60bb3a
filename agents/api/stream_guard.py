"""Every SSE stream of the API goes through ``StreamGuard``: capped per caller, closed when access ends.

- **Caps.** A caller may hold ``STREAMS_PER_API_KEY`` open streams per API key and
  ``STREAMS_PER_USER`` per user (a key's streams count for its creator too). One more
  answers 429 before anything starts (no run is created). A slot is a cache entry
  (Redis in production, so every process shares the count) that the stream refreshes
  while it lives; a process that dies frees its slots when they expire.
- **Access.** The stream joins its caller's access groups (``accounts.access_watch``):
  a removed member, a deactivated user, a revoked key or a logout closes it at once, and it
  re-checks by itself at least every ``STREAM_ACCESS_RECHECK_SECONDS`` (expired keys).
  Closing sends one Letta ``error_message`` frame saying why, then ends the stream.
- **Faults.** Nothing raises out of a stream once it has started (Daphne could neither answer
  nor log it): a lost Redis connection stops the push watch and the periodic re-check takes
  over; a body that fails, or an access check that cannot run, ends the stream with an
  ``error_message`` frame (``stream_interrupted``), from which a client resumes by ``seq_id``
  (``GET /v1/runs/{id}/stream``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache import cache
from rest_framework import exceptions

from accounts.access import organization_of, session_user_id
from accounts.access_watch import ACCESS_CHANGED, ACCESS_ENDED, connection_access_holds, watch_groups
from accounts.models import ApiKey
from agents.api.streaming import sse_frame

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from django.http import StreamingHttpResponse
    from rest_framework.request import Request

logger = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_AFTER_SECONDS = 5
ACCESS_ENDED_MESSAGE = "This stream was closed: the access it was opened with has ended."
INTERRUPTED_MESSAGE = (
    "This stream was interrupted by a server fault; the run goes on or ends on its own. "
    "Resume it with GET /v1/runs/{run_id}/stream from the last seq_id you received."
)


class TooManyStreams(exceptions.Throttled):
    """429 with ``Retry-After`` (a stream may end at any moment) and the detail as written."""

    def __init__(self, detail: str) -> None:
        exceptions.APIException.__init__(self, detail)
        self.wait = RETRY_AFTER_SECONDS


@dataclass
class StreamGuard:
    organization_id: Any
    user_id: Any
    api_key_id: Any
    session_key: str | None
    slots: list[str] = field(default_factory=list)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def respond(cls, request: Request, make_response: Callable[[], StreamingHttpResponse]) -> StreamingHttpResponse:
        """Take the caller's stream slots (429 when full), then build the response and guard its body."""
        guard, response = cls._holding_slots(request, make_response)
        return guard.wrap(response)

    @classmethod
    def respond_later(
        cls, request: Request, prepare: Callable[[], Callable[[], Awaitable[StreamingHttpResponse]]]
    ) -> Callable[[], Awaitable[StreamingHttpResponse]]:
        """``respond`` for a response built on the event loop (an async view's stream).

        Now, in the request's thread: take the slots (429 when full) and call ``prepare`` (create
        the run, say); it returns the coroutine function that builds the response, which the
        returned one awaits and guards. The slots are freed if either step raises.
        """
        guard, build = cls._holding_slots(request, prepare)

        async def respond() -> StreamingHttpResponse:
            try:
                response = await build()
            except BaseException:
                await sync_to_async(guard.release)()
                raise
            return guard.wrap(response)

        return respond

    @classmethod
    def _holding_slots(cls, request: Request, first: Callable[[], T]) -> tuple[StreamGuard, T]:
        """The caller's guard with its slots taken (429 when full), and what ``first`` returns;
        the slots are freed if ``first`` raises."""
        guard = cls.for_request(request)
        guard.take_slots()
        try:
            return guard, first()
        except BaseException:
            guard.release()
            raise

    def wrap(self, response: StreamingHttpResponse) -> StreamingHttpResponse:
        """Guard ``response``'s body: it holds this guard's slots until it ends or is closed."""
        response.streaming_content = _GuardedBody(self, self.guard(response.streaming_content))  # type: ignore[arg-type]
        return response

    @classmethod
    def for_request(cls, request: Request) -> StreamGuard:
        organization = organization_of(request)
        if isinstance(request.auth, ApiKey):
            key = request.auth
            return cls(
                organization_id=key.organization_id, user_id=key.created_by_id, api_key_id=key.pk, session_key=None
            )
        return cls(
            organization_id=organization.pk if organization else None,
            user_id=session_user_id(request),
            api_key_id=None,
            session_key=request._request.session.session_key,
        )

    def take_slots(self) -> None:
        """One slot of the key's and one of the user's; ``Throttled`` (429) when either is full."""
        wanted = []
        if self.api_key_id is not None:
            wanted.append((f"api-key-{self.api_key_id}", settings.STREAMS_PER_API_KEY, "API key"))
        if self.user_id is not None:
            wanted.append((f"user-{self.user_id}", settings.STREAMS_PER_USER, "user"))
        for owner, cap, label in wanted:
            slot = next(
                (f"streams:{owner}:{i}" for i in range(cap) if cache.add(f"streams:{owner}:{i}", self.token, _ttl())),
                None,
            )
            if slot is None:
                self.release()
                raise TooManyStreams(
                    f"Too many open streams: this {label} already has {cap} open. Close one and try again."
                )
            self.slots.append(slot)

    def refresh(self) -> None:
        """Keep the slots alive; a cache outage meanwhile is survived (the slots then expire on their own)."""
        try:
            for slot in self.slots:
                cache.touch(slot, _ttl())
        except Exception:
            logger.warning("Could not refresh stream slots; they expire on their own", exc_info=True)

    def release(self) -> None:
        try:
            for slot in self.slots:
                if cache.get(slot) == self.token:
                    cache.delete(slot)
        except Exception:
            logger.warning("Could not free stream slots; they expire on their own", exc_info=True)
        self.slots = []

    async def holds(self) -> bool:
        await sync_to_async(self.refresh)()
        return bool(
            await sync_to_async(connection_access_holds)(
                organization_id=self.organization_id,
                user_id=self.user_id,
                api_key_id=self.api_key_id,
                session_key=self.session_key,
            )
        )

    async def guard(self, body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """``body``, ended with an error frame as soon as the caller's access ends."""
        layer: Any = get_channel_layer()
        groups = watch_groups(user_id=self.user_id, api_key_id=self.api_key_id, session_key=self.session_key)
        channel = await _watch(layer, groups)
        source = aiter(body)
        next_chunk: asyncio.Future[bytes] | None = None
        notice: asyncio.Future[dict[str, Any]] | None = None
        checked_at = time.monotonic()
        try:
            while True:
                if next_chunk is None:
                    next_chunk = asyncio.ensure_future(anext(source))
                if notice is None and channel is not None:
                    notice = asyncio.ensure_future(layer.receive(channel))
                timeout = max(0.0, checked_at + settings.STREAM_ACCESS_RECHECK_SECONDS - time.monotonic())
                waiting: set[asyncio.Future[Any]] = {next_chunk} if notice is None else {next_chunk, notice}
                done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                recheck = not done
                if notice is not None and notice in done:
                    kind = _notice_type(notice)
                    notice = None
                    if kind is None:  # the channel layer is gone: the periodic re-check watches alone
                        await _unwatch(layer, groups, channel)
                        channel = None
                    if kind == ACCESS_ENDED:
                        yield _access_ended_frame()
                        return
                    recheck = recheck or kind == ACCESS_CHANGED
                if next_chunk in done:
                    try:
                        chunk = next_chunk.result()
                    except StopAsyncIteration:
                        return
                    except Exception:
                        logger.exception("A stream's body failed; ending the stream with an error frame")
                        yield _interrupted_frame()
                        return
                    next_chunk = None
                    yield chunk
                if recheck:
                    checked_at = time.monotonic()
                    try:
                        holds = await self.holds()
                    except Exception:
                        logger.exception("Could not re-check a stream's access; ending the stream")
                        yield _interrupted_frame()
                        return
                    if not holds:
                        yield _access_ended_frame()
                        return
        finally:
            for pending in (next_chunk, notice):
                if pending is not None and not pending.done():
                    pending.cancel()
                    with contextlib.suppress(BaseException):
                        await pending
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
            await _unwatch(layer, groups, channel)
            await sync_to_async(self.release)()


@dataclass
class _GuardedBody:
    """The guarded stream, and a ``close`` that Django calls once the response is done with (even on a
    disconnect), so the slots are freed without waiting for the generator to be finalized."""

    stream_guard: StreamGuard
    body: AsyncIterator[bytes]

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self.body

    def close(self) -> None:
        self.stream_guard.release()


def _ttl() -> int:
    """A slot outlives a dead process by at most this long; live streams refresh it at every re-check."""
    return max(60, int(2 * settings.STREAM_ACCESS_RECHECK_SECONDS) + 1)


async def _watch(layer: Any, groups: list[str]) -> str | None:
    """A channel in the access groups, or ``None`` without a channel layer or while it is unreachable."""
    if layer is None:
        return None
    try:
        channel: str = await layer.new_channel()
        for group in groups:
            await layer.group_add(group, channel)
    except Exception:
        logger.warning("Channel layer unreachable: this stream re-checks its access periodically", exc_info=True)
        return None
    return channel


async def _unwatch(layer: Any, groups: list[str], channel: str | None) -> None:
    for group in groups if channel else []:
        with contextlib.suppress(Exception):
            await layer.group_discard(group, channel)


def _notice_type(notice: asyncio.Future[dict[str, Any]]) -> str | None:
    """The access notice's type; ``None`` when the channel layer failed (a Redis restart)."""
    try:
        return str(notice.result().get("type"))
    except Exception:
        logger.warning("Lost the channel layer while watching a stream's access", exc_info=True)
        return None


def _error_frame(error_type: str, message: str) -> bytes:
    return sse_frame(
        {
            "id": f"message-{uuid.uuid4()}",
            "message_type": "error_message",
            "error_type": error_type,
            "message": message,
            "detail": message,
        }
    )


def _access_ended_frame() -> bytes:
    return _error_frame("access_ended", ACCESS_ENDED_MESSAGE)


def _interrupted_frame() -> bytes:
    return _error_frame("stream_interrupted", INTERRUPTED_MESSAGE)
