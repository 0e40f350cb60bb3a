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
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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

RETRY_AFTER_SECONDS = 5
ACCESS_ENDED_MESSAGE = "This stream was closed: the access it was opened with has ended."


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
        guard = cls.for_request(request)
        guard.take_slots()
        try:
            response = make_response()
        except BaseException:
            guard.release()
            raise
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
        guard = cls.for_request(request)
        guard.take_slots()
        try:
            build = prepare()
        except BaseException:
            guard.release()
            raise

        async def respond() -> StreamingHttpResponse:
            try:
                response = await build()
            except BaseException:
                await sync_to_async(guard.release)()
                raise
            return guard.wrap(response)

        return respond

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
        for slot in self.slots:
            cache.touch(slot, _ttl())

    def release(self) -> None:
        for slot in self.slots:
            if cache.get(slot) == self.token:
                cache.delete(slot)
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
        channel = await layer.new_channel() if layer is not None else None
        groups = watch_groups(user_id=self.user_id, api_key_id=self.api_key_id, session_key=self.session_key)
        for group in groups if channel else []:
            await layer.group_add(group, channel)
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
                    kind = notice.result().get("type")
                    notice = None
                    if kind == ACCESS_ENDED:
                        yield _access_ended_frame()
                        return
                    recheck = recheck or kind == ACCESS_CHANGED
                if next_chunk in done:
                    try:
                        chunk = next_chunk.result()
                    except StopAsyncIteration:
                        return
                    next_chunk = None
                    yield chunk
                if recheck:
                    checked_at = time.monotonic()
                    if not await self.holds():
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
            for group in groups if channel else []:
                with contextlib.suppress(Exception):
                    await layer.group_discard(group, channel)
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


def _access_ended_frame() -> bytes:
    return sse_frame(
        {
            "id": f"message-{uuid.uuid4()}",
            "message_type": "error_message",
            "error_type": "access_ended",
            "message": ACCESS_ENDED_MESSAGE,
            "detail": ACCESS_ENDED_MESSAGE,
        }
    )
