"""What the vendor clients share: one ``generate`` over an official SDK.

A vendor client (``agents.llm.anthropic``, ``agents.llm.openai``) says how to build its
body, send it (streamed or whole), decode what comes back and name its SDK's errors;
the call itself, the error translation and the closing ``Completed`` are written here.
The SDK's own retries are off (``max_retries=0``): ``agents.llm.retry`` is the one place
that retries. Every call is bounded by ``Timeouts``: the SDK's connect and read timeouts,
and a total deadline over the whole answer, streamed or not.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from django.conf import settings

from agents.llm.base import LLMError, LLMTimeout
from agents.llm.connections import shared_sdk_client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from agents.llm.base import Completed, LLMEvent, LLMRequest

SDK = TypeVar("SDK")


@dataclass(frozen=True)
class Timeouts:
    """A model call's bounds in seconds: to connect, to wait for the next bytes (the first one
    included), and for the whole answer."""

    connect: float
    first_byte: float
    total: float

    @classmethod
    def from_settings(cls) -> Timeouts:
        """``LLM_CONNECT_TIMEOUT``, ``LLM_FIRST_BYTE_TIMEOUT`` and ``LLM_TOTAL_TIMEOUT``."""
        return cls(
            connect=settings.LLM_CONNECT_TIMEOUT,
            first_byte=settings.LLM_FIRST_BYTE_TIMEOUT,
            total=settings.LLM_TOTAL_TIMEOUT,
        )


class Decoder(Protocol):
    """Turns one response (its stream's events, or the whole of it) into our events."""

    def feed(self, raw: Any) -> list[LLMEvent]: ...

    def feed_whole(self, whole: object) -> list[LLMEvent]: ...

    def finish(self) -> Completed: ...


class SDKStream(Protocol):
    def __aiter__(self) -> AsyncIterator[Any]: ...

    async def close(self) -> None: ...


class SDKClient(ABC, Generic[SDK]):
    """An ``LLMClient`` over a vendor's SDK; subclasses fill in the vendor's parts."""

    provider: str
    label: str  # the provider's name in messages ("Anthropic")

    def __init__(self, *, api_key: str, base_url: str | None = None, timeouts: Timeouts | None = None) -> None:
        self.api_key = api_key
        self.base_url = base_url or None
        self.timeouts = timeouts or Timeouts.from_settings()

    @abstractmethod
    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        """The exact JSON body the vendor would receive (the dry run)."""

    @abstractmethod
    def _decoder(self, request: LLMRequest) -> Decoder: ...

    @abstractmethod
    async def _send(self, request: LLMRequest, payload: dict[str, Any], *, stream: bool) -> Any:
        """Send ``payload``; return the stream of the vendor's events (an ``SDKStream``) or the whole answer."""

    @abstractmethod
    def _translate_error(self, exc: Exception) -> LLMError | None:
        """The ``LLMError`` for an SDK or transport exception; ``None`` for anything else (a bug)."""

    @abstractmethod
    def _new_sdk(self) -> SDK:
        """A new SDK client, made with ``_sdk_options``."""

    async def generate(self, request: LLMRequest, *, stream: bool) -> AsyncIterator[LLMEvent]:
        payload = self.build_payload(request, stream=stream)
        decoder = self._decoder(request)
        deadline = asyncio.get_running_loop().time() + self.timeouts.total
        try:
            async with asyncio.timeout_at(deadline):
                answer = await self._send(request, payload, stream=stream)
            if stream:
                events: SDKStream = answer
                try:
                    async for event in self._within(deadline, events, decoder):
                        yield event
                finally:
                    await events.close()
            else:
                for event in decoder.feed_whole(answer):
                    yield event
        except LLMError:
            raise
        except TimeoutError as exc:
            raise LLMTimeout(
                f"{self.label} did not finish its answer within {self.timeouts.total:g} s (LLM_TOTAL_TIMEOUT)"
            ) from exc
        except Exception as exc:
            mapped = self._translate_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        yield decoder.finish()

    @staticmethod
    async def _within(deadline: float, events: SDKStream, decoder: Decoder) -> AsyncIterator[LLMEvent]:
        """The stream's events while ``deadline`` holds; only the wait for the vendor is timed, never our consumer."""
        iterator = aiter(events)
        while True:
            async with asyncio.timeout_at(deadline):
                try:
                    raw = await anext(iterator)
                except StopAsyncIteration:
                    return
            for event in decoder.feed(raw):
                yield event

    def _sdk(self) -> SDK:
        """The SDK client of this configuration, shared on the running loop (``agents.llm.connections``)."""
        return shared_sdk_client((self.provider, self.api_key, self.base_url, self.timeouts), self._new_sdk)

    def _sdk_options(self, *, timeout: Callable[..., Any], http_client: Callable[..., Any]) -> dict[str, Any]:
        """The SDK client's arguments, given the SDK's own ``Timeout`` and ``DefaultAsyncHttpxClient``."""
        return {
            "api_key": self.api_key,
            "base_url": self.base_url,
            "max_retries": 0,
            "timeout": timeout(self.timeouts.first_byte, connect=self.timeouts.connect),
            # A redirect could lead a checked base URL to a private address (issue 14).
            "http_client": http_client(follow_redirects=False),
        }
