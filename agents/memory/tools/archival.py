"""Archival memory tools: store a passage in the calling agent's archive, and search it.

Search is hybrid (``agents.memory.archival.passage_search``): full text always, plus
similarity when the agent has an embedding model we can run. Passages are reached only
through the calling agent of the calling organization.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from asgiref.sync import sync_to_async

from agents.memory.archival import passage_insert, passage_search, search_result
from agents.models import Agent
from tools.base import Staged, ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

_STRINGS = {"type": "array", "items": {"type": "string"}}


def _agent(context: ToolContext) -> Agent:
    agent = Agent.objects.for_org(context.organization_id).filter(pk=context.agent_id).first()
    if agent is None:
        raise ToolError("The calling agent was not found.")
    return agent


def _when(value: Any, name: str) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(f"{name} must be an ISO 8601 date or time, e.g. '2024-01-15' or '2024-01-15T09:30'.") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def _archival_memory_insert(arguments: dict[str, Any], context: ToolContext) -> Staged:
    """The passage is staged: it is stored in the transaction that stores the call's result."""
    content = str(arguments["content"])
    if not content.strip():
        raise ToolError("content may not be empty.")
    tags = [str(tag) for tag in arguments.get("tags") or []]
    agent = await sync_to_async(_agent)(context)
    return Staged(None, lambda _message_id: passage_insert(agent=agent, text=content, tags=tags))


async def _archival_memory_search(arguments: dict[str, Any], context: ToolContext) -> list[dict[str, Any]] | str:
    mode: Literal["any", "all"] = arguments.get("tag_match_mode") or "any"  # the model may send anything: checked next
    if mode not in ("any", "all"):
        raise ToolError("tag_match_mode must be 'any' or 'all'.")
    start = _when(arguments.get("start_datetime"), "start_datetime")
    end = _when(arguments.get("end_datetime"), "end_datetime")

    def search() -> list[dict[str, Any]]:
        passages = passage_search(
            agent=_agent(context),
            query=str(arguments["query"]),
            tags=[str(tag) for tag in arguments.get("tags") or []],
            tag_match_mode=mode,
            top_k=arguments.get("top_k"),
            start=start,
            end=end,
        )
        return [search_result(passage) for passage in passages]

    found = await sync_to_async(search)()
    return found or "No results found."


ARCHIVAL_MEMORY_INSERT = BuiltinTool(
    name="archival_memory_insert",
    tool_type="letta_core",
    description=(
        "Add information to long-term archival memory for later retrieval. Use it for facts, notes and "
        "details worth keeping beyond the conversation; store self-contained statements and tag them."
    ),
    parameters=parameters(
        {
            "content": prop("string", "The information to store; self-contained, with the context it needs."),
            "tags": {**_STRINGS, "description": "Optional tags to categorize the memory, e.g. ['preferences']."},
        },
        required=["content"],
    ),
    run=_archival_memory_insert,
)
ARCHIVAL_MEMORY_SEARCH = BuiltinTool(
    name="archival_memory_search",
    tool_type="letta_core",
    description=(
        "Search archival memory by text and meaning, best matches first. Optionally filter by tags and by "
        'creation time. Example: archival_memory_search(query="favourite food", tags=["preferences"])'
    ),
    parameters=parameters(
        {
            "query": prop("string", "What to look for."),
            "tags": {**_STRINGS, "description": "Only passages with these tags."},
            "tag_match_mode": prop(
                "string", "'any' (default): at least one of the tags; 'all': every tag.", enum=["any", "all"]
            ),
            "top_k": prop("integer", "Maximum number of results (default 10)."),
            "start_datetime": prop("string", "Only passages created at or after this ISO 8601 time."),
            "end_datetime": prop("string", "Only passages created at or before this ISO 8601 time."),
        },
        required=["query"],
    ),
    run=_archival_memory_search,
    enable_parallel_execution=True,
)
ARCHIVAL_TOOLS = [ARCHIVAL_MEMORY_INSERT, ARCHIVAL_MEMORY_SEARCH]
