"""Reading Letta stream chunks back as the messages they add up to."""

from __future__ import annotations

import json
from typing import Any

TEXT_FIELDS = {"assistant_message": "content", "reasoning_message": "reasoning"}
CALLS = ("tool_call_message", "approval_request_message")
TRAILERS = ("stop_reason", "usage_statistics", "ping")
# The messages of the demo model's turn that calls one tool: it thinks, says, calls, gets the result, thinks, answers.
TOOL_TURN = (
    "reasoning_message",
    "assistant_message",
    "tool_call_message",
    "tool_return_message",
    "reasoning_message",
    "assistant_message",
)
# What a chunk carries besides the message it adds to: where it ends, when it was sent, its piece.
CHUNK_FIELDS = ("seq_id", "date", "tool_call", "tool_calls")


def as_dict(chunk: Any) -> dict[str, Any]:
    return chunk if isinstance(chunk, dict) else chunk.model_dump()


def _calls(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """A calls message's calls: all of them when it came whole, else the one piece its chunk carries."""
    return [call | {"arguments": call["arguments"] or ""} for call in chunk["tool_calls"] or [chunk["tool_call"]]]


def _add_calls(calls: list[dict[str, Any]], pieces: list[dict[str, Any]]) -> None:
    for piece in pieces:
        if calls and calls[-1]["tool_call_id"] == piece["tool_call_id"]:
            calls[-1]["arguments"] += piece["arguments"]
        else:
            calls.append(piece)


def assemble(chunks: list[Any]) -> list[tuple[str, str | None, str]]:
    """``(message_type, otid, text)`` per message: consecutive chunks of one message (same otid)
    joined, so deltas and a whole message compare equal. ``text`` is the text of a reasoning or
    assistant message, else the message's JSON (a calls message with each call's arguments joined)."""
    messages: list[tuple[str, str | None, Any]] = []
    for raw in chunks:
        chunk = as_dict(raw)
        kind = chunk["message_type"]
        if kind in TRAILERS:
            continue
        same = bool(messages) and messages[-1][:2] == (kind, chunk["otid"])
        field = TEXT_FIELDS.get(kind)
        if field and same:
            messages[-1] = (kind, chunk["otid"], messages[-1][2] + chunk[field])
        elif field:
            messages.append((kind, chunk["otid"], chunk[field]))
        elif kind in CALLS and same:
            _add_calls(messages[-1][2]["calls"], _calls(chunk))
        else:
            rest = {k: v for k, v in chunk.items() if k not in CHUNK_FIELDS}
            messages.append((kind, chunk["otid"], rest | ({"calls": _calls(chunk)} if kind in CALLS else {})))
    return [(kind, otid, body if isinstance(body, str) else json.dumps(body)) for kind, otid, body in messages]


def seq_ids(chunks: list[Any]) -> list[int]:
    return [as_dict(c)["seq_id"] for c in chunks if as_dict(c)["message_type"] not in TRAILERS]
