"""Recall memory: search the agent's whole conversation history, evicted rows included.

Postgres ranks with full-text search over the message content (``ts_rank`` against the
GIN index ``message_content_fts`` of migration 0004). SQLite, the embedded default,
scans the agent's rows in Python and ranks by how many of the query's words a row
contains, then how often; ties go to the newest row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import TextField
from django.db.models.functions import Cast

from agents.memory.archival import postgres_text_matches, words
from agents.models import Message

# What the GIN index ``message_content_fts`` covers: content, tool calls and tool results as JSON text.
MESSAGE_TEXT = (
    Cast("content", TextField()),
    Cast("tool_calls", TextField()),
    Cast("tool_returns", TextField()),
)
SEARCHABLE_ROLES = ("assistant", "user", "tool")
DEFAULT_ROLES = ("assistant", "user")
_CHUNK = 1_000


@dataclass(frozen=True)
class RecallHit:
    message: Message
    text: str
    relevance: float


def message_text(message: Message) -> str:
    """What a row says: its text parts, its tool calls' arguments and its tool results."""
    parts = [part.get("text", "") for part in message.content if isinstance(part, dict) and part.get("type") == "text"]
    parts += [str(call.get("arguments", "")) for call in message.tool_calls if isinstance(call, dict)]
    parts += [str(ret.get("tool_return", "")) for ret in message.tool_returns if isinstance(ret, dict)]
    return "\n".join(part for part in parts if part)


def message_search(
    *,
    organization_id: Any,
    agent_id: Any,
    query: str,
    roles: Sequence[str] = DEFAULT_ROLES,
    limit: int = 10,
    start: datetime | None = None,
    end: datetime | None = None,
    conversation_id: Any = None,
) -> list[RecallHit]:
    """The agent's rows (all the organization's for ``agent_id=None``) best matching any word of ``query``,
    best first (newest first on ties); ``conversation_id`` keeps one conversation's rows."""
    query_words = words(query)
    if not query_words:
        return []
    rows = Message.objects.for_org(organization_id).filter(role__in=list(roles))
    if agent_id is not None:
        rows = rows.filter(agent_id=agent_id)
    if conversation_id is not None:
        rows = rows.filter(conversation_id=conversation_id)
    if start is not None:
        rows = rows.filter(created_at__gte=start)
    if end is not None:
        rows = rows.filter(created_at__lte=end)
    if connection.vendor == "postgresql":
        matches = postgres_text_matches(rows, MESSAGE_TEXT, query_words)[:limit]
        return [RecallHit(m, message_text(m), round(float(m.rank), 4)) for m in matches]
    return _scan(rows, query_words, limit)


def _scan(rows: Any, query_words: list[str], limit: int) -> list[RecallHit]:
    scored: list[tuple[int, int, int, Message, str]] = []
    fields = ("id", "seq", "role", "content", "tool_calls", "tool_returns", "created_at", "agent_id", "conversation_id")
    for message in rows.only(*fields).order_by("-created_at", "-seq").iterator(chunk_size=_CHUNK):
        text = message_text(message)
        folded = text.casefold()
        hits = [folded.count(word) for word in query_words]
        if any(hits):
            scored.append((sum(1 for hit in hits if hit), sum(hits), message.seq, message, text))
    scored.sort(key=lambda item: (-item[0], -item[1], -item[2]))
    return [
        RecallHit(message, text, round(distinct / len(query_words), 4))
        for distinct, _, _, message, text in scored[:limit]
    ]
