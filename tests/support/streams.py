"""Reading Letta stream chunks back as the messages they add up to."""

from __future__ import annotations

import json
from typing import Any

TEXT_FIELDS = {"assistant_message": "content", "reasoning_message": "reasoning"}
TRAILERS = ("stop_reason", "usage_statistics", "ping")


def as_dict(chunk: Any) -> dict[str, Any]:
    return chunk if isinstance(chunk, dict) else chunk.model_dump()


def assemble(chunks: list[Any]) -> list[tuple[str, str | None, str]]:
    """``(message_type, otid, text)`` per message: consecutive chunks of one message (same otid)
    joined, so deltas and a whole message compare equal; ``text`` of other messages is their JSON."""
    messages: list[tuple[str, str | None, str]] = []
    for raw in chunks:
        chunk = as_dict(raw)
        kind = chunk["message_type"]
        if kind in TRAILERS:
            continue
        field = TEXT_FIELDS.get(kind)
        text = chunk[field] if field else json.dumps({k: v for k, v in chunk.items() if k not in ("seq_id", "date")})
        if field and messages and messages[-1][:2] == (kind, chunk["otid"]):
            messages[-1] = (kind, chunk["otid"], messages[-1][2] + text)
        else:
            messages.append((kind, chunk["otid"], text))
    return messages


def seq_ids(chunks: list[Any]) -> list[int]:
    return [as_dict(c)["seq_id"] for c in chunks if as_dict(c)["message_type"] not in TRAILERS]
