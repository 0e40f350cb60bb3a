"""The organization's approvals inbox: every approval request waiting for a person, across agents.

One selector, ``pending_approvals(organization)``, feeds the inbox page, the header's count
badge, the inbox's live socket and ``GET /v1/approvals/pending``. What is pending is decided
once, by ``agents.selectors.pending_approval_rows`` (the chat and the API ask it too).
Changes are announced by ``agents.broadcast``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.models import Agent, Message
from agents.selectors import pending_approval_rows
from agents.wire.messages import approval_request, letta_timestamp
from tools.models import AgentTool, ApprovalPolicy

if TYPE_CHECKING:
    from accounts.models import Organization


@dataclass(frozen=True)
class PendingApproval:
    """An agent waiting for a person, and the assistant row whose calls wait."""

    agent: Agent
    row: Message

    @property
    def request(self) -> dict[str, Any]:
        message = approval_request(self.row)
        assert message is not None  # pending_approvals keeps only rows that ask for approval
        return message


def pending_approvals(organization: Organization | None) -> list[PendingApproval]:
    """Every pending approval request of ``organization``, newest first (one query)."""
    rows = pending_approval_rows(Agent.objects.for_org(organization))
    pending = [PendingApproval(agent=row.agent, row=row) for row in rows]
    return sorted(pending, key=lambda item: item.row.created_at, reverse=True)


def pending_approval_count(organization: Organization | None) -> int:
    return len(pending_approvals(organization))


def first_line(text: str) -> str:
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")


def approval_tools(agent: Agent) -> dict[str, dict[str, Any]]:
    """What an approval card shows of each tool attached to ``agent``: its description's
    first line, its parameters' JSON schema (for the "Edit" form) and, when the call asks
    because of the tool's own default, why the tool asks (an MCP tool's server marks it
    destructive: ``metadata.mcp.approval_reason``), by tool name."""
    attached = AgentTool.objects.filter(agent=agent).select_related("tool")
    return {
        at.tool.name: {
            "description": first_line(at.tool.description),
            "parameters": (at.tool.json_schema or {}).get("parameters") or {},
            "why": _default_reason(at),
        }
        for at in attached
    }


def _default_reason(attached: AgentTool) -> str:
    if attached.approval_policy != ApprovalPolicy.INHERIT or not attached.tool.default_requires_approval:
        return ""
    mcp = (attached.tool.metadata or {}).get("mcp")
    return str(mcp.get("approval_reason") or "") if isinstance(mcp, dict) else ""


def inbox_item(pending: PendingApproval) -> dict[str, Any]:
    """One inbox entry as the inbox page and its socket receive it."""
    return {
        "agent": {"id": pending.agent.public_id, "name": pending.agent.name},
        "requested_at": letta_timestamp(pending.row.created_at),
        "request": pending.request,
        "tools": approval_tools(pending.agent),
    }


def inbox_state(organization: Organization | None) -> dict[str, Any]:
    """The inbox's state frame: the count and every entry."""
    items = [inbox_item(pending) for pending in pending_approvals(organization)]
    return {"type": "approvals", "count": len(items), "items": items}
