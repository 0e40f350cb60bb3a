"""``conversation_search``: find earlier messages of the calling agent's own conversation.

Searches the whole history (rows evicted from the context window included) through
``agents.memory.recall.message_search``: full-text ranking on Postgres, a ranked word
match on SQLite. Rows are reached only through the calling organization and agent.
The answer has Letta's shape: ``Showing N results: [...]`` with each hit's timestamp,
how long ago it was, role, relevance and content.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, time
from typing import Any

from asgiref.sync import sync_to_async

from agents.memory.recall import DEFAULT_ROLES, message_search
from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

DEFAULT_LIMIT = 10
MAX_LIMIT = 100
EXCERPT_CHARS = 2_000
SEARCHABLE_ROLES = ("assistant", "user", "tool")


async def _conversation_search(arguments: dict[str, Any], context: ToolContext) -> str:
    query = str(arguments["query"])
    roles = arguments.get("roles") or list(DEFAULT_ROLES)
    limit = min(max(int(arguments.get("limit") or DEFAULT_LIMIT), 1), MAX_LIMIT)
    start = _parse_date(arguments.get("start_date"), "start_date", end_of_day=False)
    end = _parse_date(arguments.get("end_date"), "end_date", end_of_day=True)

    def search() -> list[Any]:
        return message_search(
            organization_id=context.organization_id,
            agent_id=context.agent_id,
            query=query,
            roles=roles,
            limit=limit,
            start=start,
            end=end,
        )

    hits = await sync_to_async(search)()
    if not hits:
        return "No results found."
    now = datetime.now(UTC)
    results = [
        {
            "timestamp": hit.message.created_at.astimezone(UTC).isoformat(timespec="seconds"),
            "time_ago": _ago(now - hit.message.created_at),
            "role": hit.message.role,
            "relevance": hit.relevance,
            "content": hit.text[:EXCERPT_CHARS],
        }
        for hit in hits
    ]
    return f"Showing {len(results)} results: {json.dumps(results, ensure_ascii=False)}"


def _ago(delta: Any) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"


def _parse_date(value: Any, name: str, *, end_of_day: bool) -> datetime | None:
    if not value:
        return None
    text = str(value)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ToolError(f"{name} must be ISO 8601: 'YYYY-MM-DD' or 'YYYY-MM-DDTHH:MM', got {text!r}.") from None
    if end_of_day and len(text) == len("YYYY-MM-DD"):  # a date alone covers that whole day
        parsed = datetime.combine(parsed.date(), time.max)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


CONVERSATION_SEARCH = BuiltinTool(
    name="conversation_search",
    tool_type="letta_core",
    description=(
        "Search prior conversation history (the whole history, also what is no longer in your context), "
        "best matches first.\n\n"
        'Examples: conversation_search(query="project updates"); '
        'conversation_search(query="error", roles=["assistant"], start_date="2024-01-15", end_date="2024-01-20")'
    ),
    parameters=parameters(
        {
            "query": prop("string", "Words to look for; a message matching more of them ranks higher."),
            "roles": prop(
                "array",
                "Optional list of message roles to filter by (default: user and assistant).",
                items={"type": "string", "enum": list(SEARCHABLE_ROLES)},
            ),
            "limit": prop("integer", f"Maximum number of results to return (default {DEFAULT_LIMIT})."),
            "start_date": prop(
                "string",
                "Only messages created on or after this date (inclusive): 'YYYY-MM-DD' or 'YYYY-MM-DDTHH:MM', UTC.",
            ),
            "end_date": prop(
                "string",
                "Only messages created on or before this date (inclusive; a date alone includes that whole day).",
            ),
        },
        required=["query"],
    ),
    run=_conversation_search,
    enable_parallel_execution=True,
)

CONVERSATION_TOOLS = [CONVERSATION_SEARCH]
