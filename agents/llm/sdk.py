"""What the vendor clients share: one ``generate`` over an official SDK.

A vendor client (``agents.llm.anthropic``, ``agents.llm.openai``) says how to build its
body, send it (streamed or whole), decode what comes back and name its SDK's errors;
the call itself, the error translation and the closing ``Completed`` are written here.
The SDK's own retries are off (``max_retries=0``): ``agents.llm.retry`` is the one place
that retries.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from agents.llm.base import LLMError
from agents.llm.connections import shared_sdk_client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from agents.llm.base import Completed, LLMEvent, LLMRequest

SDK = TypeVar("SDK")
CONNECT_TIMEOUT = 10.0


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

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout: float = 600.0) -> None:
        self.api_key = api_key
        self.base_url = base_url or None
        self.timeout = timeout

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
        try:
            answer = await self._send(request, payload, stream=stream)
            if stream:
                events: SDKStream = answer
                try:
                    async for raw in events:
                        for event in decoder.feed(raw):
                            yield event
                finally:
                    await events.close()
            else:
                for event in decoder.feed_whole(answer):
                    yield event
        except LLMError:
            raise
        except Exception as exc:
            mapped = self._translate_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        yield decoder.finish()

    def _sdk(self) -> SDK:
        """The SDK client of this configuration, shared on the running loop (``agents.llm.connections``)."""
        return shared_sdk_client((self.provider, self.api_key, self.base_url, self.timeout), self._new_sdk)

    def _sdk_options(self, *, timeout: Callable[..., Any], http_client: Callable[..., Any]) -> dict[str, Any]:
        """The SDK client's arguments, given the SDK's own ``Timeout`` and ``DefaultAsyncHttpxClient``."""
        return {
            "api_key": self.api_key,
            "base_url": self.base_url,
            "max_retries": 0,
            "timeout": timeout(self.timeout, connect=CONNECT_TIMEOUT),
            # A redirect could lead a checked base URL to a private address (issue 14).
            "http_client": http_client(follow_redirects=False),
        }
