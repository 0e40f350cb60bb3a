"""Anthropic Messages API through the official SDK, streamed and not (the call is ``agents.llm.sdk``'s).

The body we build is sent as ready JSON through the SDK's low-level ``post`` rather
than ``messages.create``: given a body (``create``'s params or ``post(body=...)`` alike),
the SDK walks and copies all of it on every call (``_utils/_prepare.copy_tree``), which
showed in profiles as time growing with the conversation (hundreds of messages per
request). Given ``content``, it sends the bytes as they are. The answer comes back as
parsed JSON (``cast_to=object``: the SDK decodes the body, or each event of a stream,
and builds no ``Message`` models that the decoder would only take apart again);
connection pooling, auth, timeouts, status errors and the stream's error events stay
the SDK's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anthropic
import httpx2
import orjson

from agents.llm.anthropic_payload import build_body, build_headers
from agents.llm.base import (
    LLMError,
    LLMInvalidResponse,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from agents.llm.completion import ResponseTally, complete
from agents.llm.errors import connection_error, error_from_status, malformed_response
from agents.llm.sdk import SDKClient

if TYPE_CHECKING:
    from agents.llm.base import Completed, FinishReason, LLMEvent, LLMRequest

PROVIDER_LABEL = "Anthropic"

_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}

# The SDK's own JSON encoding of a body (``anthropic._utils._json.openapi_dumps``): compact, UTF-8.
_json_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def encode_body(payload: dict[str, Any]) -> bytes:
    """``payload`` as the SDK would send it (compact UTF-8 JSON), the same bytes: by orjson, in a tenth
    of ``json``'s time for a long conversation (issue 24); by ``json`` for what orjson refuses (an integer
    beyond 64 bits), which raises there as it always did for what JSON cannot hold."""
    try:
        return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        return _json_encode(payload).encode()


class AnthropicClient(SDKClient[anthropic.AsyncAnthropic]):
    """An ``LLMClient`` for ``anthropic/<model>`` handles. Cheap to create."""

    provider = "anthropic"
    label = PROVIDER_LABEL

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        return build_body(request, stream=stream)

    def _decoder(self, request: LLMRequest) -> _Decoder:
        return _Decoder(request)

    async def _send(self, request: LLMRequest, payload: dict[str, Any], *, stream: bool) -> Any:
        # What ``messages.create`` does, minus its walk and copy of the body (see the module docstring).
        headers = build_headers(request, stream=stream)
        options: anthropic.RequestOptions = {"headers": headers} if headers else {}
        return await self._sdk().post(
            "/v1/messages",
            cast_to=object,
            content=encode_body(payload),
            options=options,
            stream=stream,
            stream_cls=anthropic.AsyncStream[object] if stream else None,
        )

    def _translate_error(self, exc: Exception) -> LLMError | None:
        return translate_error(exc)

    def _new_sdk(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            **self._sdk_options(timeout=anthropic.Timeout, http_client=anthropic.DefaultAsyncHttpxClient)
        )


def translate_error(exc: Exception) -> LLMError | None:
    """The ``LLMError`` for an SDK or transport exception; ``None`` for anything else (a bug)."""
    if isinstance(exc, anthropic.APIStatusError):
        return error_from_status(
            PROVIDER_LABEL,
            status=exc.status_code,
            message=exc.api_message or exc.message,
            headers=exc.response.headers,
            error_type=exc.type,
        )
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
        return connection_error(PROVIDER_LABEL, exc)
    if isinstance(exc, anthropic.APIResponseValidationError | json.JSONDecodeError):
        return malformed_response(PROVIDER_LABEL, exc)
    return None


def _mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: a field of the wrong type reads as missing."""
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass
class _Block:
    kind: str
    tool_index: int = -1
    signature: str = ""


@dataclass
class _Decoder:
    """Turns the stream's events (or the whole message), as parsed JSON, into our events, keeping the tally."""

    request: LLMRequest
    tally: ResponseTally = field(default_factory=ResponseTally)
    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: str | None = None
    terminal: bool = False
    usage: dict[str, int] | None = None

    def feed(self, raw: object) -> list[LLMEvent]:
        event = _mapping(raw)
        kind = event.get("type")
        if kind == "message_start":
            self._note_usage(_mapping(event.get("message")).get("usage"))
            return []
        if kind == "content_block_start":
            return self._start_block(event.get("index"), _mapping(event.get("content_block")))
        if kind == "content_block_delta":
            return self._delta(event.get("index"), _mapping(event.get("delta")))
        if kind == "content_block_stop":
            block = self.blocks.get(event.get("index"))  # type: ignore[arg-type]
            if block and block.kind == "thinking" and block.signature:
                return [ReasoningSignature(block.signature)]
            return []
        if kind == "message_delta":
            self.stop_reason = _mapping(event.get("delta")).get("stop_reason") or self.stop_reason
            self._note_usage(event.get("usage"))
            return []
        if kind == "message_stop":
            self.terminal = True
        return []

    def feed_whole(self, message: object) -> list[LLMEvent]:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, list):
            raise LLMInvalidResponse(f"{PROVIDER_LABEL} sent a response that is not a message")
        events: list[LLMEvent] = []
        for index, raw_block in enumerate(content):
            block = _mapping(raw_block)
            events.extend(self._start_block(index, block, whole=True))
            signature = _text(block.get("signature"))
            if self.blocks.get(index, _Block("")).kind == "thinking" and signature:
                events.append(ReasoningSignature(signature))
        stop_reason = message.get("stop_reason")
        self.stop_reason = stop_reason if isinstance(stop_reason, str) else None
        self.terminal = self.stop_reason is not None
        self._note_usage(message.get("usage"))
        return events

    def finish(self) -> Completed:
        finish_reason = _FINISH_REASONS.get(self.stop_reason or "")
        if self.stop_reason:
            self.terminal = True
        return complete(
            PROVIDER_LABEL,
            self.request,
            self.tally,
            finish_reason=finish_reason,
            terminal=self.terminal,
            usage=self._usage(),
        )

    def _start_block(self, index: object, block: dict[str, Any], *, whole: bool = False) -> list[LLMEvent]:
        if not isinstance(index, int):
            return []
        kind = block.get("type")
        events: list[LLMEvent] = []
        if kind == "text":
            self.blocks[index] = _Block("text")
            if text := _text(block.get("text")):
                events.append(TextDelta(text))
        elif kind == "thinking":
            self.blocks[index] = _Block("thinking", signature=_text(block.get("signature")))
            if thinking := _text(block.get("thinking")):
                events.append(ReasoningDelta(thinking))
        elif kind == "redacted_thinking":
            self.blocks[index] = _Block("redacted_thinking")
            events.append(RedactedReasoning(_text(block.get("data"))))
        elif kind == "tool_use":
            tool_index = self.tally.tool_calls
            self.blocks[index] = _Block("tool_use", tool_index=tool_index)
            events.append(ToolCallStart(index=tool_index, id=_text(block.get("id")), name=_text(block.get("name"))))
            # Streams start tool_use with ``input: {}`` and send the JSON as deltas.
            arguments = block.get("input")
            if arguments or whole:
                events.append(ToolCallArgumentsDelta(index=tool_index, fragment=json.dumps(arguments or {})))
        return [self.tally.note(event) for event in events]

    def _delta(self, index: object, delta: dict[str, Any]) -> list[LLMEvent]:
        block = self.blocks.get(index) if isinstance(index, int) else None
        kind = delta.get("type")
        event: LLMEvent | None = None
        if kind == "text_delta" and (text := _text(delta.get("text"))):
            event = TextDelta(text)
        elif kind == "thinking_delta" and (thinking := _text(delta.get("thinking"))):
            event = ReasoningDelta(thinking)
        elif kind == "signature_delta" and block is not None:
            block.signature += _text(delta.get("signature"))
        elif kind == "input_json_delta" and block is not None and (fragment := _text(delta.get("partial_json"))):
            event = ToolCallArgumentsDelta(index=block.tool_index, fragment=fragment)
        return [self.tally.note(event)] if event is not None else []

    def _note_usage(self, raw: object) -> None:
        usage = _mapping(raw)
        if not usage:
            return
        merged = dict(self.usage or {})
        for name in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            value = usage.get(name)
            if isinstance(value, int):
                merged[name] = value
        thinking_tokens = _mapping(usage.get("output_tokens_details")).get("thinking_tokens")
        if isinstance(thinking_tokens, int):
            merged["thinking_tokens"] = thinking_tokens
        self.usage = merged or self.usage

    def _usage(self) -> Usage | None:
        if not self.usage:
            return None
        cache_read = self.usage.get("cache_read_input_tokens", 0)
        # Anthropic's input_tokens leaves out cached tokens; prompt_tokens counts the whole prompt.
        prompt = self.usage.get("input_tokens", 0) + cache_read + self.usage.get("cache_creation_input_tokens", 0)
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=self.usage.get("output_tokens", 0),
            reasoning_tokens=self.usage.get("thinking_tokens", 0),
            cached_tokens=cache_read,
        )
