"""Answering an approval request: decisions from a page (the chat, the inbox) or from the expiry
start the run that carries the turn on, through ``agents.runs.start.run_start`` like any other run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.engine.inputs import ApprovalCreate, TurnRequest
from agents.models import RunTransport
from agents.runs.start import RunMode, run_start

if TYPE_CHECKING:
    from accounts.models import User
    from agents.engine.inputs import ApprovalItem, ToolReturnItem
    from agents.models import Agent, Run


def approval_answer(
    *,
    agent: Agent,
    approvals: list[ApprovalItem | ToolReturnItem],
    user: User | None = None,
    transport: RunTransport = RunTransport.CHAT,
) -> Run:
    """Answer the agent's pending batch in one submission (Letta's ``ApprovalCreate`` items), in a worker."""
    request = TurnRequest(messages=[ApprovalCreate(approvals=approvals)])
    return run_start(agent=agent, request=request, mode=RunMode.BACKGROUND, user=user, transport=transport)
