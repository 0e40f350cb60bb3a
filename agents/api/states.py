"""An agent's ``AgentState`` for the API: the reads it needs (through the selectors), then the projection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework.response import Response

from agents import selectors
from agents.llm.handles import split_handle
from agents.memory.selectors import agent_blocks
from agents.wire.resources import agent_state
from providers.selectors import handle_providers

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from agents.api.base import OrgScopedAPIView
    from agents.models import Agent
    from agents.wire.resources import AgentState
    from providers.selectors import HandleProvider


def providers_of(agents: Sequence[Agent]) -> dict[str, HandleProvider]:
    """The providers the agents' model and embedding handles name (one query for a whole list)."""
    if not agents:
        return {}
    names = {split_handle(handle)[0] for agent in agents for handle in (agent.model, agent.embedding) if handle}
    return handle_providers(organization=agents[0].organization_id, names=names)


def agent_state_of(
    agent: Agent,
    *,
    pending: bool = False,
    message_ids: Sequence[Any] | None = None,
    providers: Mapping[str, HandleProvider] | None = None,
) -> AgentState:
    """``agent``'s state (its tools and blocks from the prefetch when done); ``pending`` fills
    ``pending_approval``; ``message_ids`` are its in-context ids and ``providers`` the providers
    its handles name, when already read (a list's batch)."""
    if message_ids is None:
        message_ids = selectors.in_context_message_ids([agent])[agent.pk]
    if providers is None:
        providers = providers_of([agent])
    return agent_state(
        agent,
        blocks=agent_blocks(agent),
        agent_tools=selectors.agent_tool_rows(agent),
        message_ids=message_ids,
        pending_approval=selectors.pending_approval_row(agent) if pending else None,
        providers=providers,
    )


def agent_state_response(view: OrgScopedAPIView, agent_id: str) -> Response:
    """The answer of a route that changed an agent: its state as it is now, read again with its prefetches."""
    return Response(agent_state_of(view.get_agent(agent_id)))
