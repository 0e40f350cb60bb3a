"""What one turn works with: the store it writes through, the model, the tools and their runner, the settings.

``agents.runs.turns`` builds these from an agent's rows; the engine's tests build them by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.engine import approvals as approval_rules

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from agents.engine.context import ModelSettings
    from agents.engine.rules import ToolRules
    from agents.engine.store import ConversationStore
    from agents.llm.base import LLMClient
    from tools.base import ToolContext, ToolRunner, ToolSpec


@dataclass
class TurnCollaborators:
    store: ConversationStore
    llm: LLMClient
    tool_runner: ToolRunner
    tools: list[ToolSpec]
    settings: ModelSettings
    rules: ToolRules
    tool_context: ToolContext
    sender: dict[str, Any] = field(default_factory=dict)
    author: approval_rules.DecisionAuthor = approval_rules.UNKNOWN_AUTHOR
    """Who answers approvals in this turn (recorded with each decision)."""
    allow_always: Callable[[str], Awaitable[None]] | None = None
    """Stop asking for approval of the named tool on this agent (a decision's ``always_allow``)."""
