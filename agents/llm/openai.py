"""OpenAI chat completions (and compatible servers) through the official SDK, streamed and not
(the call is ``agents.llm.sdk``'s).

Compatible servers may stream ``reasoning_content`` (or ``reasoning``), omit usage
(then it is estimated and marked so) or omit the finish reason after content
(then ``Completed.finish_reason`` is ``None``).

The body goes through the SDK's low-level ``post`` and the answer comes back as parsed
JSON (``cast_to=object``): the SDK decodes the body, or each chunk of a stream, and
builds no ``ChatCompletion`` models that the decoder would only take apart again. Auth,
pooling, timeouts, status errors, a stream's error objects and Azure's deployment paths
stay the SDK's.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx2
import openai

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
from agents.llm.sdk import SDKClient, Timeouts

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
    label = PROVIDER_LABEL

    def __init__(self, *, api_key: str, base_url: str | None = None, timeouts: Timeouts | None = None) -> None:
        super().__init__(api_key=api_key, base_url=(base_url or OPENAI_BASE_URL).rstrip("/"), timeouts=timeouts)

    @property
    def is_compatible_server(self) -> bool:
        return self.base_url != OPENAI_BASE_URL

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        return build_body(request, stream=stream, compatible_server=self.is_compatible_server)

    def _decoder(self, request: LLMRequest) -> _Decoder:
        return _Decoder(request)

    async def _send(self, request: LLMRequest, payload: dict[str, Any], *, stream: bool) -> Any:
        # What ``chat.completions.create`` does, minus building the typed answer from its JSON.
        return await self._sdk().post(
            "/chat/completions",
            cast_to=object,
            body=payload,
            stream=stream,
            stream_cls=openai.AsyncStream[object] if stream else None,
        )

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


def _mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: a field of the wrong type reads as missing."""
    return value if isinstance(value, dict) else {}


def _reasoning_text(message: dict[str, Any]) -> str:
    """``reasoning_content`` (DeepSeek, vLLM, llama.cpp) or ``reasoning`` (OpenRouter, newer vLLM)."""
    for name in ("reasoning_content", "reasoning"):
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass
class _Decoder:
    """Turns the stream's chunks (or the whole completion), as parsed JSON, into our events."""

    request: LLMRequest
    tally: ResponseTally = field(default_factory=ResponseTally)
    tool_slots: dict[int, int] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None

    def feed(self, raw: object) -> list[LLMEvent]:
        chunk = _mapping(raw)
        if chunk.get("usage") is not None:
            self.usage = _usage(_mapping(chunk["usage"]))
        events: list[LLMEvent] = []
        choices = chunk.get("choices")
        for choice in (_mapping(item) for item in (choices if isinstance(choices, list) else [])):
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                events.extend(self._message_events(delta, streamed=True))
            if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
                self.finish_reason = choice["finish_reason"]
        return [self.tally.note(event) for event in events]

    def feed_whole(self, completion: object) -> list[LLMEvent]:
        choices = completion.get("choices") if isinstance(completion, dict) else None
        if not isinstance(completion, dict) or not isinstance(choices, list):
            raise LLMInvalidResponse(f"{PROVIDER_LABEL} sent a response that is not a chat completion")
        if not choices:
            raise LLMInvalidResponse(f"{PROVIDER_LABEL} returned no choices")
        choice = _mapping(choices[0])
        finish_reason = choice.get("finish_reason")
        self.finish_reason = finish_reason if isinstance(finish_reason, str) else None
        if completion.get("usage") is not None:
            self.usage = _usage(_mapping(completion["usage"]))
        events = self._message_events(_mapping(choice.get("message")), streamed=False)
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

    def _message_events(self, message: dict[str, Any], *, streamed: bool) -> list[LLMEvent]:
        events: list[LLMEvent] = []
        reasoning = _reasoning_text(message)
        if reasoning:
            events.append(ReasoningDelta(reasoning))
        for text in (message.get("content"), message.get("refusal")):
            if isinstance(text, str) and text:
                events.append(TextDelta(text))
        calls = message.get("tool_calls")
        for position, call in enumerate(_mapping(item) for item in (calls if isinstance(calls, list) else [])):
            function = _mapping(call.get("function"))
            vendor_index = call.get("index", position) if streamed else position
            slot = self.tool_slots.get(vendor_index)
            if slot is None:
                slot = self.tool_slots[vendor_index] = len(self.tool_slots)
                name = function.get("name")
                call_id = call.get("id")
                events.append(
                    ToolCallStart(
                        index=slot,
                        id=call_id if isinstance(call_id, str) and call_id else f"call_{uuid.uuid4().hex[:24]}",
                        name=name if isinstance(name, str) else "",
                    )
                )
            arguments = function.get("arguments")
            if isinstance(arguments, str) and arguments:
                events.append(ToolCallArgumentsDelta(index=slot, fragment=arguments))
        return events


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def _usage(raw: dict[str, Any]) -> Usage:
    return Usage(
        prompt_tokens=_count(raw.get("prompt_tokens")),
        completion_tokens=_count(raw.get("completion_tokens")),
        reasoning_tokens=_count(_mapping(raw.get("completion_tokens_details")).get("reasoning_tokens")),
        cached_tokens=_count(_mapping(raw.get("prompt_tokens_details")).get("cached_tokens")),
    )
