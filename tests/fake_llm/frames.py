"""Small pieces shared by both protocol renderers."""

from __future__ import annotations

import json
import math
import re
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fake_llm.exchange import Exchange
    from tests.fake_llm.script import Reply

_PIECE = re.compile(r"\s*\S+\s*")
ARGUMENT_FRAGMENT = 8


def pieces(text: str) -> list[str]:
    """Word-sized deltas whose concatenation is ``text``."""
    return _PIECE.findall(text) or ([text] if text else [])


def fragments(text: str, size: int = ARGUMENT_FRAGMENT) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def usage_counts(reply: Reply, exchange: Exchange) -> tuple[int, int] | None:
    """``(input, output)`` tokens to report, or ``None`` to report no usage."""
    if reply.usage is None:
        return None
    if isinstance(reply.usage, tuple):
        return reply.usage
    output = len(reply.text) + len(reply.reasoning or "") + sum(len(json.dumps(a)) for _, a in reply.tool_calls)
    return math.ceil(exchange.prompt_chars / 4), max(1, math.ceil(output / 4))
