"""The approval state machine: what is pending, and how an answer resolves it.

Pure functions over in-context rows; the loop calls them before anything is
persisted, so the three Letta errors are raised before any streaming starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agents.errors import InvalidApprovalInput, InvalidToolCallIds, NoPendingApproval

if TYPE_CHECKING:
    from agents.engine.store import MessageSnapshot

DENIAL_TEMPLATE = "Error: request to call tool denied. User reason: {reason}"


@dataclass(frozen=True)
class PendingBatch:
    """An assistant row whose tool calls have no results yet."""

    message: MessageSnapshot

    @property
    def gated_calls(self) -> list[dict[str, Any]]:
        return [c for c in self.message.tool_calls if c.get("requires_approval")]

    @property
    def awaits_approval(self) -> bool:
        return bool(self.gated_calls)


def unanswered_batch(rows: list[MessageSnapshot]) -> PendingBatch | None:
    """The last assistant row if its tool calls were never answered by a tool row."""
    for row in reversed(rows):
        if row.role in ("system",):
            continue
        if row.role == "assistant" and row.tool_calls:
            return PendingBatch(row)
        if row.role == "approval":
            continue
        return None
    return None


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

    def as_json(self) -> dict[str, Any]:
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
    approvals: list[dict[str, Any]] | None,
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
        if approval_request_id and approval_request_id not in (pending.message.public_id, *expected):
            raise InvalidToolCallIds(expected, [approval_request_id])
        decisions = [
            Decision(tool_call_id=cid, kind="approval", approve=bool(approve), reason=reason) for cid in expected
        ]
    else:
        raise InvalidApprovalInput("An approval needs an 'approvals' list or the 'approve' field.")

    received = [d.tool_call_id for d in decisions]
    if sorted(received) != sorted(expected) or len(set(received)) != len(received):
        raise InvalidToolCallIds(expected, received)
    by_id = {d.tool_call_id: d for d in decisions}
    return [by_id[cid] for cid in expected]


def _decision_from_item(item: Any) -> Decision:
    if not isinstance(item, dict):
        raise InvalidApprovalInput("Each item of 'approvals' must be an object.")
    kind = item.get("type", "approval")
    tool_call_id = item.get("tool_call_id")
    if not isinstance(tool_call_id, str) or not tool_call_id:
        raise InvalidApprovalInput("Each item of 'approvals' needs a 'tool_call_id'.")
    if kind == "tool":
        status = item.get("status", "success")
        if status not in ("success", "error"):
            raise InvalidApprovalInput("'status' of a tool return must be 'success' or 'error'.")
        return Decision(tool_call_id=tool_call_id, kind="tool", tool_return=item.get("tool_return"), status=status)
    if kind != "approval":
        raise InvalidApprovalInput(f"Unknown approval item type {kind!r}; expected 'approval' or 'tool'.")
    if not isinstance(item.get("approve"), bool):
        raise InvalidApprovalInput("'approve' must be true or false.")
    return Decision(tool_call_id=tool_call_id, kind="approval", approve=item["approve"], reason=item.get("reason"))
