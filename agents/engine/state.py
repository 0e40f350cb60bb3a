"""What the in-context rows say about the conversation: calls of this turn, unanswered
batches, whether an input is acceptable now, and the request a dry run would send."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from agents.engine import approvals as approval_rules
from agents.engine.context import build_request
from agents.engine.inputs import ApprovalInput, TurnInput
from agents.engine.store import MessageSnapshot
from agents.errors import InvalidApprovalInput, PendingApprovalConflict

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agents.engine.context import ModelSettings
    from agents.engine.rules import ToolRules
    from agents.engine.types import StoredToolCall
    from agents.llm.base import LLMRequest
    from tools.base import ToolSpec


def calls_this_turn(rows: list[MessageSnapshot]) -> list[str]:
    """Names of the tools called since the last user row, in order."""
    called: list[str] = []
    for row in reversed(rows):
        if row.role == "user":
            break
        if row.role == "tool":
            called[:0] = [r.get("name", "") for r in row.tool_returns]
    return called


def missing_results(
    rows: list[MessageSnapshot],
) -> tuple[MessageSnapshot, MessageSnapshot | None, list[StoredToolCall]] | None:
    """The last batch whose calls lack results (not counting one that waits for approval).

    Returns the assistant row, its tool row (if any) and the calls without a result.
    """
    tool_row: MessageSnapshot | None = None
    answered = False
    for row in reversed(rows):
        if row.role == "tool" and tool_row is None:
            tool_row = row
            continue
        if row.role == "approval":
            answered = True
            continue
        if row.role == "assistant" and row.tool_calls:
            have = {r["tool_call_id"] for r in (tool_row.tool_returns if tool_row else [])}
            missing = [c for c in row.tool_calls if c["id"] not in have]
            waiting = tool_row is None and not answered and any(c.get("requires_approval") for c in row.tool_calls)
            if missing and not waiting:
                return row, tool_row, missing
            return None
        return None
    return None


def check_turn_input(
    rows: list[MessageSnapshot], turn_input: TurnInput, *, specs: Mapping[str, ToolSpec] | None = None
) -> list[approval_rules.Decision]:
    """Raise Letta's errors for input the conversation's state does not accept; return approval decisions
    (none for an approval applied already: ``approvals.already_applied``).

    With ``specs``, edited approval arguments are checked against their tool's schema too.
    """
    pending = approval_rules.pending_approval(rows)
    if isinstance(turn_input, ApprovalInput):
        if pending is None and approval_rules.already_applied(rows, turn_input.tool_call_ids):
            return []  # a resend of an answer applied already: the turn goes on without it
        return approval_rules.resolve_decisions(
            pending,
            approvals=turn_input.approvals,
            approve=turn_input.approve,
            approval_request_id=turn_input.approval_request_id,
            reason=turn_input.reason,
            specs=specs,
        )
    if pending is not None:
        raise PendingApprovalConflict(pending.message.public_id)
    if isinstance(turn_input, list) and not turn_input:
        raise InvalidApprovalInput("Send at least one message.")
    return []


def preview_request(
    rows: list[MessageSnapshot], turn_input: TurnInput, tools: list[ToolSpec], settings: ModelSettings, rules: ToolRules
) -> LLMRequest:
    """The exact request the model would receive for ``turn_input`` now (the dry run); persists nothing."""
    check_turn_input(rows, turn_input, specs={spec.name: spec for spec in tools})
    preview = list(rows)
    if isinstance(turn_input, list):
        for index, item in enumerate(turn_input):
            preview.append(
                MessageSnapshot(
                    id=uuid.uuid4(),
                    agent_id=None,
                    seq=(rows[-1].seq if rows else 0) + index + 1,
                    role="user",
                    content=[{"type": "text", "text": item.text}],
                )
            )
    specs = {spec.name for spec in tools}
    called = calls_this_turn(preview)
    allowed = {name for name in specs if rules.violation(name, called, specs) is None}
    memory = settings.memory.compile_sync() if settings.memory is not None else None
    return build_request(preview, tools, settings, allowed=allowed, memory=memory)
