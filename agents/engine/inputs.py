"""What a turn is asked to do: answer user messages, resolve an approval, or step again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class UserInput:
    text: str
    otid: str = ""


@dataclass(frozen=True)
class ApprovalInput:
    approvals: list[dict[str, Any]] | None = None
    approve: bool | None = None
    approval_request_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ContinueInput:
    """Step again without new input (after ``max_steps``, or to retry a failed turn)."""


TurnInput = list[UserInput] | ApprovalInput | ContinueInput
