"""Engine events as Letta's streaming wire format (SSE ``data:`` frames).

Rows the engine persisted are projected with ``wire.letta_messages_for_row``;
with ``stream_tokens`` the deltas become per-token chunks of the same message
(same ``id`` and ``otid``), and the assistant row they previewed is not sent
again. Input rows (the user's message, the approval answer) are not echoed. A compaction's
summary row is a ``user_message`` (Letta 0.13's wire), or, when the request asked with
``include_compaction_messages``, an ``event_message`` and a ``summary_message`` (1.x).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.http import StreamingHttpResponse
from django.utils import timezone

from agents.engine.events import (
    MessageEvent,
    ReasoningDeltaEvent,
    RunFinishedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    TurnUsage,
)
from agents.wire.messages import compaction_messages, letta_messages_for_row, message_header, part_otid, row_kind

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from agents.engine.events import EngineEvent

INPUT_ROLES = {"user", "approval", "system"}


def stop_reason_json(stop_reason: str) -> dict[str, Any]:
    return {"message_type": "stop_reason", "stop_reason": stop_reason}


def usage_json(usage: TurnUsage, run_ids: list[str] | None = None) -> dict[str, Any]:
    return {
        "message_type": "usage_statistics",
        "completion_tokens": usage.completion_tokens,
        "prompt_tokens": usage.prompt_tokens,
        "total_tokens": usage.total_tokens,
        "step_count": usage.step_count,
        "run_ids": run_ids,
    }


def sse_frame(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {data}\n\n".encode()


def keep_alive(*, include_pings: bool) -> bytes:
    """What a stream sends after ``SSE_KEEPALIVE_SECONDS`` of silence: Letta's ping event, or an SSE comment."""
    if include_pings:
        return sse_frame({"id": f"ping-{uuid.uuid4()}", "message_type": "ping"})
    return b": keep-alive\n\n"


def sse_response(body: AsyncIterator[bytes]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(body, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


@dataclass
class _PreviewRow:
    """The header fields of an assistant row that is still being streamed."""

    id: Any
    step_id: Any
    run_id: Any
    created_at: datetime
    name: str = ""
    is_err: bool = False


@dataclass
class LettaStreamEncoder:
    """Turns engine events into LettaMessage chunks, in order."""

    stream_tokens: bool
    compaction_messages: bool = False  # a summary row as ``event_message`` + ``summary_message`` (1.x asks)
    _parts: dict[tuple[Any, str, int], int] = field(default_factory=dict)
    _started: dict[Any, datetime] = field(default_factory=dict)

    def encode(self, event: EngineEvent) -> list[dict[str, Any]]:
        if isinstance(event, MessageEvent):
            row = event.message
            if self.compaction_messages and row_kind(row) == "summary":
                return compaction_messages(row)
            if row.role in INPUT_ROLES or (event.streamed and row.role == "assistant"):
                return []
            return letta_messages_for_row(row)
        if isinstance(event, RunFinishedEvent):
            return [stop_reason_json(event.stop_reason), usage_json(event.usage)]
        return [self._delta(event)]

    def _part_index(self, message_id: Any, kind: str, known: int | None = None) -> int:
        key = (message_id, kind, 0)
        if key not in self._parts:
            self._parts[key] = known if known is not None else sum(1 for k in self._parts if k[0] == message_id)
        return self._parts[key]

    def _delta(self, event: ReasoningDeltaEvent | TextDeltaEvent | ToolCallDeltaEvent) -> dict[str, Any]:
        started = self._started.setdefault(event.message_id, timezone.now())
        if isinstance(event, ReasoningDeltaEvent | TextDeltaEvent):
            kind = "reasoning" if isinstance(event, ReasoningDeltaEvent) else "text"
            index = self._part_index(event.message_id, kind, event.part_index)
            signature = event.signature if isinstance(event, ReasoningDeltaEvent) else None
            return text_delta_chunk(
                kind, event.message_id, event.step_id, event.run_id, started, index, event.text, signature
            )
        row = _PreviewRow(id=event.message_id, step_id=event.step_id, run_id=event.run_id, created_at=started)
        kind = "approval_request_message" if event.requires_approval else "tool_call_message"
        otid = part_otid(event.message_id, self._part_index(event.message_id, kind))
        return message_header(row, kind, otid) | {
            "tool_call": {"name": event.name, "arguments": event.arguments_delta, "tool_call_id": event.tool_call_id},
            "tool_calls": None,
        }


def text_delta_chunk(
    kind: str,
    message_id: Any,
    step_id: Any,
    run_id: Any,
    started: datetime,
    part_index: int,
    text: str,
    signature: str | None = None,
) -> dict[str, Any]:
    """A reasoning (``kind="reasoning"``) or assistant (``"text"``) delta as a chunk of the LettaMessage it previews."""
    row = _PreviewRow(id=message_id, step_id=step_id, run_id=run_id, created_at=started)
    otid = part_otid(message_id, part_index)
    if kind == "reasoning":
        return message_header(row, "reasoning_message", otid) | {
            "source": "reasoner_model",
            "reasoning": text,
            "signature": signature,
        }
    return message_header(row, "assistant_message", otid) | {"content": text}
