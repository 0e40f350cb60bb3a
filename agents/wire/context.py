"""The shape of Letta's ``ContextWindowOverview``: what the next model call of an agent would carry.

``agents.runs.preview.context_overview`` builds it (it reads the rows and the tools itself);
the API documents its answer with this type.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

from agents.wire.values import DateTime


class FunctionDefinition(TypedDict):
    type: Literal["function"]
    function: dict[str, Any]


class ContextMessage(TypedDict):
    id: str
    role: str
    content: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]] | None
    tool_returns: list[dict[str, Any]] | None
    agent_id: str
    created_at: DateTime | None


class ContextWindowOverview(TypedDict):
    """Letta's ``ContextWindowOverview``; token counts are estimates (``token_counts_estimated``)."""

    context_window_size_max: int
    context_window_size_current: int
    num_messages: int
    num_archival_memory: int
    num_recall_memory: int
    num_tokens_external_memory_summary: int
    external_memory_summary: str
    num_tokens_system: int
    system_prompt: str
    num_tokens_core_memory: int
    core_memory: str
    num_tokens_summary_memory: int
    summary_memory: str | None
    num_tokens_functions_definitions: int
    functions_definitions: list[FunctionDefinition]
    num_tokens_messages: int
    messages: list[ContextMessage]
    token_counts_estimated: bool
