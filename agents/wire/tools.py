"""Tools as Letta's wire JSON (``Tool``, and the items of ``POST /v1/tools/search``); rows in, no queries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from tools.models import Tool as ToolRow


class Tool(TypedDict):
    id: str
    tool_type: str
    description: str | None
    source_type: str
    name: str
    tags: list[str]
    source_code: str | None
    json_schema: dict[str, Any] | None
    args_json_schema: dict[str, Any] | None
    return_char_limit: int
    pip_requirements: list[dict[str, Any]] | None
    npm_requirements: list[dict[str, Any]] | None
    default_requires_approval: bool
    enable_parallel_execution: bool
    created_by_id: str | None
    last_updated_by_id: str | None
    metadata_: dict[str, Any]


def tool_json(tool: ToolRow) -> Tool:
    """Letta's ``Tool``."""
    return {
        "id": tool.public_id,
        "tool_type": tool.tool_type,
        "description": tool.description or None,
        "source_type": tool.source_type,
        "name": tool.name,
        "tags": list(tool.tags or []),
        "source_code": tool.source_code or None,
        "json_schema": tool.json_schema or None,
        "args_json_schema": tool.args_json_schema,
        "return_char_limit": tool.return_char_limit,
        "pip_requirements": None,
        "npm_requirements": None,
        "default_requires_approval": tool.default_requires_approval,
        "enable_parallel_execution": tool.enable_parallel_execution,
        "created_by_id": None,
        "last_updated_by_id": None,
        "metadata_": dict(tool.metadata or {}),
    }


class ToolSearchResult(TypedDict):
    """An item of ``POST /v1/tools/search`` (Letta's; we keep no tool embeddings, so no vector rank)."""

    tool: Tool
    embedded_text: str | None
    fts_rank: int | None
    vector_rank: int | None
    combined_score: float


def tool_search_result(tool: ToolRow, *, fts_rank: int | None, score: float) -> ToolSearchResult:
    return {
        "tool": tool_json(tool),
        "embedded_text": None,
        "fts_rank": fts_rank,
        "vector_rank": None,
        "combined_score": score,
    }
