"""Why a run stopped: one closed enum, the run status each reason leads to, and the reason a
failed model call gives.

The model fields, the API schema and the chat derive from this enum; nothing
else lists stop reasons.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.llm.base import LLMError


class StopReason(StrEnum):
    END_TURN = "end_turn"
    REQUIRES_APPROVAL = "requires_approval"
    MAX_STEPS = "max_steps"
    TOOL_RULE = "tool_rule"
    NO_TOOL_CALL = "no_tool_call"
    INVALID_TOOL_CALL = "invalid_tool_call"
    INVALID_LLM_RESPONSE = "invalid_llm_response"
    LLM_API_ERROR = "llm_api_error"
    ERROR = "error"
    CANCELLED = "cancelled"

    @property
    def run_status(self) -> str:
        """``completed``, ``cancelled`` or ``failed``: the status of a run that stopped for this reason."""
        if self is StopReason.CANCELLED:
            return "cancelled"
        return "completed" if self in _COMPLETED else "failed"


_COMPLETED = frozenset(
    {
        StopReason.END_TURN,
        StopReason.REQUIRES_APPROVAL,
        StopReason.MAX_STEPS,
        StopReason.TOOL_RULE,
        StopReason.NO_TOOL_CALL,
    }
)


def stop_reason_for(error: LLMError) -> StopReason:
    """The stop reason of a turn ended by a failed model call: ``llm_api_error`` when the call
    did not get through (``LLMError.transport``), ``invalid_llm_response`` when its answer was unusable."""
    return StopReason.LLM_API_ERROR if error.transport else StopReason.INVALID_LLM_RESPONSE
