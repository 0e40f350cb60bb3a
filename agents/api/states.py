"""An agent's ``AgentState`` for the API: the reads it needs (through the selectors), then the projection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents import selectors
from agents.memory.selectors import agent_blocks
from agents.wire.resources import agent_state

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agents.models import Agent
    from agents.wire.resources import AgentState


def agent_state_of(agent: Agent, *, pending: bool = False, message_ids: Sequence[Any] | None = None) -> AgentState:
    """``agent``'s state (its tools and blocks from the prefetch when done); ``pending`` fills
    ``pending_approval``; ``message_ids`` are its in-context ids when already read (a list's batch)."""
    if message_ids is None:
        message_ids = selectors.in_context_message_ids([agent])[agent.pk]
    return agent_state(
        agent,
        blocks=agent_blocks(agent),
        agent_tools=selectors.agent_tool_rows(agent),
        message_ids=message_ids,
        pending_approval=selectors.pending_approval_row(agent) if pending else None,
    )
