"""The approval state machine: what is pending, and how an answer resolves it.

Pure functions over in-context rows; the loop calls them before anything is
persisted, so the three Letta errors are raised before any streaming starts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from agents.engine.inputs import ApprovalItem, ToolReturnItem
from agents.errors import InvalidApprovalInput, InvalidArgument, InvalidToolCallIds, NoPendingApproval
from tools import elicitation
from tools.conditions import ConditionError, ConditionUnevaluable, condition_holds
from tools.validation import ArgumentError, validate_arguments

if TYPE_CHECKING:
    from agents.engine.store import MessageSnapshot
    from agents.engine.types import JsonValue, StoredApprovalItem, StoredToolCall, Transport
    from tools.base import ToolSpec

DENIAL_TEMPLATE = "Error: request to call tool denied. User reason: {reason}"


# --- which calls wait for a person (the one place that decides) ---------------------------


def needs_approval(spec: ToolSpec | None, arguments: str) -> bool:
    """Whether a call of ``spec`` with ``arguments`` (JSON text) waits for a person.

    A client-side tool always does (its caller runs it); otherwise the agent's policy for
    the tool: ``requires_approval`` always asks, an ``approval_condition`` asks when it holds
    for the arguments, and when it cannot be decided (unparsable arguments, a missing
    argument, a kind mismatch) it asks too: a broken rule never lets a call through unseen.
    """
    if spec is None:
        return False
    if spec.kind == "client" or spec.requires_approval:
        return True
    if not spec.approval_condition:
        return False
    try:
        parsed = json.loads(arguments or "{}")
        return not isinstance(parsed, dict) or condition_holds(spec.approval_condition, parsed)
    except (ValueError, ConditionError, ConditionUnevaluable):
        return True


def may_need_approval(spec: ToolSpec | None) -> bool:
    """Whether a call of ``spec`` might wait, before its arguments are complete (token streaming)."""
    return spec is not None and (spec.kind == "client" or spec.requires_approval or bool(spec.approval_condition))


# --- who decided ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionAuthor:
    """Who answers approval requests in a turn, as the audit records it (DESIGN §13)."""

    decided_by: str
    """For people to read: the user's email, ``API key <name>``, or ``Approval expiry``."""
    transport: Transport
    user_id: int | None = None
    api_key_id: int | None = None


UNKNOWN_AUTHOR = DecisionAuthor(decided_by="Unknown", transport="api")


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
    arguments: dict[str, JsonValue] | None = None
    """Edited arguments (validated and coerced to the tool's schema) the call runs with instead."""
    original_arguments: dict[str, JsonValue] | None = None
    """The model's arguments, kept when ``arguments`` replaced them."""
    always_allow: bool = False
    tool_name: str = ""

    @property
    def denied(self) -> bool:
        return self.kind == "approval" and not self.approve

    @property
    def edited(self) -> bool:
        return self.arguments is not None

    def as_json(self, author: DecisionAuthor, decided_at: datetime) -> StoredApprovalItem:
        """The decision as stored on the approval row, with its audit (who, when, how)."""
        when = decided_at.isoformat()
        if self.kind == "tool":
            return {
                "type": "tool",
                "tool_call_id": self.tool_call_id,
                "tool_return": self.tool_return,
                "status": self.status,
                "stdout": None,
                "stderr": None,
                "decided_by": author.decided_by,
                "decided_by_user_id": author.user_id,
                "decided_by_api_key_id": author.api_key_id,
                "decided_at": when,
                "transport": author.transport,
            }
        return {
            "type": "approval",
            "tool_call_id": self.tool_call_id,
            "approve": self.approve,
            "reason": self.reason,
            "original_arguments": self.original_arguments,
            "arguments": self.arguments,
            "always_allow": self.always_allow,
            "decided_by": author.decided_by,
            "decided_by_user_id": author.user_id,
            "decided_by_api_key_id": author.api_key_id,
            "decided_at": when,
            "transport": author.transport,
        }


RETRY_WINDOW = 10
"""How many of the newest in-context rows Letta searches for an answer already applied."""
KEEP_ALIVE_TEXT = (
    "<system-alert>Automated keep-alive ping. Ignore this message and continue from where you stopped.</system-alert>"
)
"""The user text Letta runs a turn with when a resent approval has no messages after it."""


def already_applied(rows: list[MessageSnapshot], tool_call_ids: list[str]) -> bool:
    """Whether an approval naming ``tool_call_ids`` was applied already (Letta 0.16.4+'s retry rule):
    one of the newest ``RETRY_WINDOW`` rows holds the results of exactly these calls."""
    if not tool_call_ids:
        return False
    wanted = sorted(tool_call_ids)
    for row in rows[-RETRY_WINDOW:]:
        if row.role == "tool" and sorted(r.get("tool_call_id", "") for r in row.tool_returns) == wanted:
            return True
    return False


def resolve_decisions(
    pending: PendingBatch | None,
    *,
    approvals: list[ApprovalItem | ToolReturnItem] | None,
    approve: bool | None = None,
    approval_request_id: str | None = None,
    reason: str | None = None,
    specs: Mapping[str, ToolSpec] | None = None,
) -> list[Decision]:
    """Turn an ``ApprovalCreate`` into one decision per gated call, or raise Letta's errors.

    The ``approvals`` list wins over the legacy ``approve`` / ``approval_request_id``
    / ``reason`` fields; the legacy form answers every gated call at once. Edited
    ``arguments`` are checked against the tool's schema in ``specs`` (a 400 naming the
    argument); without ``specs`` they are taken as given (the turn checks them again).
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
    calls = {c["id"]: c for c in pending.gated_calls}
    return [_with_call(by_id[cid], calls[cid], specs) for cid in expected]


def _with_call(decision: Decision, call: StoredToolCall, specs: Mapping[str, ToolSpec] | None) -> Decision:
    """The decision with its call's tool name, and its edited arguments checked against the tool's schema
    (an answer to a tool's question, in ``reason``, against the question's schema)."""
    asked = call.get("elicitation")
    if asked is not None and decision.kind == "approval" and decision.approve:
        try:
            elicitation.answer_content(asked, decision.reason)
        except ValueError as exc:
            raise InvalidArgument(f"The answer to call {call['id']}: {exc}", field="reason") from exc
    if decision.arguments is None:
        return replace(decision, tool_name=call["name"])
    arguments = decision.arguments
    if specs is not None:
        spec = specs.get(call["name"])
        if spec is None:
            raise InvalidArgument(
                f"The arguments of call {call['id']} cannot be edited: tool {call['name']!r} is not attached.",
                field="arguments",
            )
        try:
            arguments = validate_arguments(spec.name, spec.parameters, json.dumps(arguments))
        except ArgumentError as exc:
            raise InvalidArgument(f"Edited arguments of call {call['id']}: {exc}", field="arguments") from exc
    try:
        original = json.loads(call.get("arguments") or "{}")
    except ValueError:
        original = call.get("arguments")
    return replace(
        decision,
        tool_name=call["name"],
        arguments=arguments,
        original_arguments=original if isinstance(original, dict) else {"_raw": original},
    )


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
    return Decision(
        tool_call_id=item.tool_call_id,
        kind="approval",
        approve=item.approve,
        reason=item.reason,
        arguments=item.arguments,
        always_allow=bool(item.always_allow),
    )


def tool_return_text(value: Any) -> str:
    """A client's result as the model reads it: a string as given; a list of text parts
    (``[{"type": "text", "text": …}]``, as Letta's ``ToolReturn`` allows) as their text, one
    part a line; anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str) for part in value
    ):
        return "\n".join(part["text"] for part in value)
    return json.dumps(value)


def edited_arguments(rows: list[MessageSnapshot]) -> dict[str, str]:
    """``tool_call_id → arguments (JSON text)`` for every call a decision in ``rows`` edited:
    what the model is shown for those calls instead of what it wrote."""
    edited: dict[str, str] = {}
    for row in rows:
        if row.role != "approval":
            continue
        for item in row.approvals:
            arguments = item.get("arguments")
            if item.get("type") == "approval" and isinstance(arguments, dict):
                edited[item["tool_call_id"]] = json.dumps(arguments)
    return edited
