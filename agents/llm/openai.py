"""OpenAI chat completions (and compatible servers) through the official SDK, streamed and not
(the call is ``agents.llm.sdk``'s).

Compatible servers may stream ``reasoning_content`` (or ``reasoning``), omit usage
(then it is estimated and marked so) or omit the finish reason after content
(then ``Completed.finish_reason`` is ``None``).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from agents.llm.base import (
    LLMError,
    LLMInvalidResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from agents.llm.completion import ResponseTally, complete
from agents.llm.errors import connection_error, error_from_status, malformed_response
from agents.llm.openai_payload import build_body
from agents.llm.sdk import SDKClient

if TYPE_CHECKING:
    from agents.llm.base import Completed, FinishReason, LLMEvent, LLMRequest

PROVIDER_LABEL = "OpenAI"
OPENAI_BASE_URL = "https://api.openai.com/v1"

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


class OpenAIClient(SDKClient[openai.AsyncOpenAI]):
    """An ``LLMClient`` for ``openai/<model>`` handles; ``base_url`` points it at a compatible server."""

    provider = "openai"

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout: float = 600.0) -> None:
        super().__init__(api_key=api_key, base_url=(base_url or OPENAI_BASE_URL).rstrip("/"), timeout=timeout)

    @property
    def is_compatible_server(self) -> bool:
        return self.base_url != OPENAI_BASE_URL

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        return build_body(request, stream=stream, compatible_server=self.is_compatible_server)

    def _decoder(self, request: LLMRequest) -> _Decoder:
        return _Decoder(request)

    async def _send(self, request: LLMRequest, payload: dict[str, Any], *, stream: bool) -> Any:
        return await self._sdk().chat.completions.create(**payload)

    def _translate_error(self, exc: Exception) -> LLMError | None:
        return translate_error(exc)

    def _new_sdk(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            **self._sdk_options(timeout=openai.Timeout, http_client=openai.DefaultAsyncHttpxClient)
        )


def translate_error(exc: Exception) -> LLMError | None:
    """The ``LLMError`` for an SDK or transport exception; ``None`` for anything else (a bug)."""
    if isinstance(exc, openai.APIStatusError):
        return error_from_status(
            PROVIDER_LABEL,
            status=exc.status_code,
            message=_body_message(exc.body) or exc.message,
            headers=exc.response.headers,
            error_type=_body_type(exc.body),
        )
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        return connection_error(PROVIDER_LABEL, exc)
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError):
        return malformed_response(PROVIDER_LABEL, exc)
    if isinstance(exc, openai.APIError):
        # An error object inside a 200 stream.
        return error_from_status(PROVIDER_LABEL, status=None, message=exc.message, error_type=_body_type(exc.body))
    return None


def _body_message(body: object) -> str | None:
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) else None


def _body_type(body: object) -> str | None:
    if not isinstance(body, dict):
        return None
    code, kind = body.get("code"), body.get("type")
    if code == "context_length_exceeded":
        return "context_length_exceeded"
    return kind if isinstance(kind, str) else None


def _reasoning_text(message: Any) -> str:
    """``reasoning_content`` (DeepSeek, vLLM, llama.cpp) or ``reasoning`` (OpenRouter, newer vLLM)."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass
class _Decoder:
    request: LLMRequest
    tally: ResponseTally = field(default_factory=ResponseTally)
    tool_slots: dict[int, int] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None

    def feed(self, chunk: Any) -> list[LLMEvent]:
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk.usage)
        events: list[LLMEvent] = []
        for choice in getattr(chunk, "choices", None) or []:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta is not None:
                events.extend(self._message_events(delta, streamed=True))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return [self.tally.note(event) for event in events]

    def feed_whole(self, completion: object) -> list[LLMEvent]:
        choices = getattr(completion, "choices", None)
        if not isinstance(completion, ChatCompletion) or not isinstance(choices, list):
            raise LLMInvalidResponse(f"{PROVIDER_LABEL} sent a response that is not a chat completion")
        if not choices:
            raise LLMInvalidResponse(f"{PROVIDER_LABEL} returned no choices")
        choice = choices[0]
        self.finish_reason = choice.finish_reason
        if getattr(completion, "usage", None) is not None:
            self.usage = _usage(completion.usage)
        events = self._message_events(choice.message, streamed=False)
        return [self.tally.note(event) for event in events]

    def finish(self) -> Completed:
        finish_reason = _FINISH_REASONS.get(self.finish_reason or "")
        if self.finish_reason and finish_reason is None:
            finish_reason = "stop"  # an unknown reason from a compatible server ("eos")
        return complete(
            PROVIDER_LABEL,
            self.request,
            self.tally,
            finish_reason=finish_reason,
            terminal=self.finish_reason is not None,
            usage=self.usage,
        )

    def _message_events(self, message: Any, *, streamed: bool) -> list[LLMEvent]:
        events: list[LLMEvent] = []
        reasoning = _reasoning_text(message)
        if reasoning:
            events.append(ReasoningDelta(reasoning))
        for text in (getattr(message, "content", None), getattr(message, "refusal", None)):
            if isinstance(text, str) and text:
                events.append(TextDelta(text))
        for position, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            vendor_index = call.index if streamed else position
            slot = self.tool_slots.get(vendor_index)
            if slot is None:
                slot = self.tool_slots[vendor_index] = len(self.tool_slots)
                name = getattr(function, "name", None) or ""
                events.append(ToolCallStart(index=slot, id=call.id or f"call_{uuid.uuid4().hex[:24]}", name=name))
            arguments = getattr(function, "arguments", None)
            if arguments:
                events.append(ToolCallArgumentsDelta(index=slot, fragment=arguments))
        return events


def _usage(raw: Any) -> Usage:
    completion_details = getattr(raw, "completion_tokens_details", None)
    prompt_details = getattr(raw, "prompt_tokens_details", None)
    return Usage(
        prompt_tokens=getattr(raw, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(raw, "completion_tokens", 0) or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", 0) or 0,
        cached_tokens=getattr(prompt_details, "cached_tokens", 0) or 0,
    )
