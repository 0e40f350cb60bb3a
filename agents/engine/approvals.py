"""The approval state machine: what is pending, and how an answer resolves it.

Pure functions over in-context rows; the loop calls them before anything is
persisted, so the three Letta errors are raised before any streaming starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agents.engine.inputs import ApprovalItem, ToolReturnItem
from agents.errors import InvalidApprovalInput, InvalidToolCallIds, NoPendingApproval

if TYPE_CHECKING:
    from agents.engine.store import MessageSnapshot
    from agents.engine.types import StoredApprovalItem, StoredToolCall

DENIAL_TEMPLATE = "Error: request to call tool denied. User reason: {reason}"


@dataclass(frozen=True)
class PendingBatch:
    """An assistant row whose tool calls have no results yet."""

    message: MessageSnapshot

    @property
    def gated_calls(self) -> list[StoredToolCall]:
        return [c for c in self.message.tool_calls if c.get("requires_approval")]

    @property
    def awaits_approval(self) -> bool:
        return bool(self.gated_calls)


def pending_approval(rows: list[MessageSnapshot]) -> PendingBatch | None:
    """The batch waiting for a human, if any: an unanswered batch with gated calls and no answer yet."""
    for row in reversed(rows):
        if row.role == "system":
            continue
        if row.role == "assistant" and row.tool_calls:
            batch = PendingBatch(row)
            return batch if batch.awaits_approval else None
        return None
    return None


@dataclass(frozen=True)
class Decision:
    """One answer to a gated call."""

    tool_call_id: str
    kind: Literal["approval", "tool"]
    approve: bool = False
    reason: str | None = None
    tool_return: Any = None
    status: Literal["success", "error"] = "success"

    @property
    def denied(self) -> bool:
        return self.kind == "approval" and not self.approve

    def as_json(self) -> StoredApprovalItem:
        if self.kind == "tool":
            return {
                "type": "tool",
                "tool_call_id": self.tool_call_id,
                "tool_return": self.tool_return,
                "status": self.status,
                "stdout": None,
                "stderr": None,
            }
        return {"type": "approval", "tool_call_id": self.tool_call_id, "approve": self.approve, "reason": self.reason}


def resolve_decisions(
    pending: PendingBatch | None,
    *,
    approvals: list[ApprovalItem | ToolReturnItem] | None,
    approve: bool | None = None,
    approval_request_id: str | None = None,
    reason: str | None = None,
) -> list[Decision]:
    """Turn an ``ApprovalCreate`` into one decision per gated call, or raise Letta's errors.

    The ``approvals`` list wins over the legacy ``approve`` / ``approval_request_id``
    / ``reason`` fields; the legacy form answers every gated call at once.
    """
    if pending is None:
        raise NoPendingApproval()
    expected = [c["id"] for c in pending.gated_calls]

    if approvals:
        decisions = [_decision_from_item(item) for item in approvals]
    elif approve is not None:
        decisions = [
            Decision(tool_call_id=cid, kind="approval", approve=bool(approve), reason=reason)
            for cid in _legacy_targets(pending, expected, approval_request_id)
        ]
    else:
        raise InvalidApprovalInput("An approval needs an 'approvals' list or the 'approve' field.")

    received = [d.tool_call_id for d in decisions]
    if sorted(received) != sorted(expected) or len(set(received)) != len(received):
        raise InvalidToolCallIds(expected, received)
    by_id = {d.tool_call_id: d for d in decisions}
    return [by_id[cid] for cid in expected]


def _legacy_targets(pending: PendingBatch, expected: list[str], approval_request_id: str | None) -> list[str]:
    """The calls a legacy ``approve`` answers.

    No id: every gated call. A tool call id: that call (the 1.x migration guide's
    form). The approval request's message id: its call, when exactly one is pending.
    """
    if not approval_request_id:
        return expected
    if approval_request_id in expected:
        return [approval_request_id]
    if approval_request_id == pending.message.public_id and len(expected) == 1:
        return expected
    raise InvalidToolCallIds(expected, [approval_request_id])


def _decision_from_item(item: ApprovalItem | ToolReturnItem) -> Decision:
    if isinstance(item, ToolReturnItem):
        return Decision(tool_call_id=item.tool_call_id, kind="tool", tool_return=item.tool_return, status=item.status)
    return Decision(tool_call_id=item.tool_call_id, kind="approval", approve=item.approve, reason=item.reason)
