"""``conversation_search``: find earlier messages of the calling agent's own conversation.

Letta ranks by text plus embeddings; this server matches text (case-insensitive), newest
first, over the agent's most recent ``SCAN_LIMIT`` messages. Rows are reached only
through ``Message.objects.for_org(context.organization_id)`` and the context's agent.
"""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async

from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

if TYPE_CHECKING:
    from agents.models import Message

SCAN_LIMIT = 5_000
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
EXCERPT_CHARS = 2_000
SEARCHABLE_ROLES = ("assistant", "user", "tool")


async def _conversation_search(arguments: dict[str, Any], context: ToolContext) -> list[dict[str, str]] | str:
    query = str(arguments["query"]).casefold()
    roles = arguments.get("roles") or list(SEARCHABLE_ROLES)
    limit = min(max(int(arguments.get("limit") or DEFAULT_LIMIT), 1), MAX_LIMIT)
    start = _parse_date(arguments.get("start_date"), "start_date", end_of_day=False)
    end = _parse_date(arguments.get("end_date"), "end_date", end_of_day=True)
    found = await sync_to_async(_search)(context, query=query, roles=roles, start=start, end=end, limit=limit)
    return found or "No results found."


def _search(
    context: ToolContext, *, query: str, roles: list[str], start: datetime | None, end: datetime | None, limit: int
) -> list[dict[str, str]]:
    from agents.models import Message

    messages = Message.objects.for_org(context.organization_id).filter(agent_id=context.agent_id, role__in=roles)
    if start is not None:
        messages = messages.filter(created_at__gte=start)
    if end is not None:
        messages = messages.filter(created_at__lte=end)
    rows = messages.order_by("-seq").only("role", "content", "tool_returns", "tool_calls", "created_at")
    found: list[dict[str, str]] = []
    for message in rows[:SCAN_LIMIT].iterator(chunk_size=500):
        text = _message_text(message)
        if query in text.casefold():
            found.append(
                {"timestamp": message.created_at.isoformat(), "role": message.role, "content": text[:EXCERPT_CHARS]}
            )
            if len(found) >= limit:
                break
    return found


def _message_text(message: Message) -> str:
    parts = [part.get("text", "") for part in message.content if isinstance(part, dict) and part.get("type") == "text"]
    parts += [str(call.get("arguments", "")) for call in message.tool_calls if isinstance(call, dict)]
    parts += [str(ret.get("tool_return", "")) for ret in message.tool_returns if isinstance(ret, dict)]
    return "\n".join(part for part in parts if part)


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
        "Search prior conversation history (text match, newest first).\n\n"
        'Examples: conversation_search(query="project updates"); '
        'conversation_search(query="error", roles=["assistant"], start_date="2024-01-15", end_date="2024-01-20")'
    ),
    parameters=parameters(
        {
            "query": prop("string", "Text to look for (case-insensitive)."),
            "roles": prop(
                "array",
                "Optional list of message roles to filter by.",
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
