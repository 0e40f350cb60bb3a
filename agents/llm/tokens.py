"""Token estimates for when a provider reports no usage (marked ``Usage(estimated=True)``)."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from agents.llm.base import AssistantTurn, ToolResultsTurn, Usage, UserTurn

if TYPE_CHECKING:
    from agents.llm.base import LLMRequest

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """About four characters a token: good enough for budgets, never billed."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_prompt_tokens(request: LLMRequest) -> int:
    chars = len(request.system)
    for turn in request.turns:
        if isinstance(turn, UserTurn):
            chars += len(turn.text)
        elif isinstance(turn, AssistantTurn):
            chars += sum(len(getattr(part, "text", "")) for part in turn.parts)
            chars += sum(len(call.name) + len(call.arguments) for call in turn.tool_calls)
        elif isinstance(turn, ToolResultsTurn):
            chars += sum(len(result.content) for result in turn.results)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return math.ceil(chars / CHARS_PER_TOKEN)


def estimate_usage(request: LLMRequest, completion_chars: int) -> Usage:
    return Usage(
        prompt_tokens=estimate_prompt_tokens(request),
        completion_tokens=math.ceil(completion_chars / CHARS_PER_TOKEN),
        estimated=True,
    )
