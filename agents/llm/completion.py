"""How a provider response ends: the checks every client applies before ``Completed``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.llm.base import (
    Completed,
    LLMInvalidResponse,
    ReasoningDelta,
    RedactedReasoning,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStart,
)
from agents.llm.tokens import estimate_usage

if TYPE_CHECKING:
    from agents.llm.base import FinishReason, LLMEvent, LLMRequest, Usage


@dataclass
class ResponseTally:
    """Counts what a response has carried so far; fed every event a client yields."""

    text_chars: int = 0
    reasoning_chars: int = 0
    redacted_blocks: int = 0
    tool_calls: int = 0
    argument_chars: int = 0

    def note(self, event: LLMEvent) -> LLMEvent:
        if isinstance(event, TextDelta):
            self.text_chars += len(event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning_chars += len(event.text)
        elif isinstance(event, RedactedReasoning):
            self.redacted_blocks += 1
        elif isinstance(event, ToolCallStart):
            self.tool_calls += 1
        elif isinstance(event, ToolCallArgumentsDelta):
            self.argument_chars += len(event.fragment)
        return event

    @property
    def has_content(self) -> bool:
        return bool(self.text_chars or self.reasoning_chars or self.redacted_blocks or self.tool_calls)

    @property
    def output_chars(self) -> int:
        return self.text_chars + self.reasoning_chars + self.argument_chars


def complete(
    provider: str,
    request: LLMRequest,
    tally: ResponseTally,
    *,
    finish_reason: FinishReason | None,
    terminal: bool,
    usage: Usage | None,
) -> Completed:
    """The closing event, or ``LLMInvalidResponse`` when the response is unusable.

    ``terminal`` says the provider ended the response properly (a stop reason or
    the stream's closing event). Content without a finish reason counts as
    finished (some compatible servers omit it); nothing at all is an error. A
    reasoning-only answer is passed on: the engine decides what it means (Letta
    accepts it after a denial that asks the model to wait).
    """
    if not tally.has_content and not terminal:
        raise LLMInvalidResponse(f"{provider} stream ended without a terminal event and without content")
    if not tally.has_content and finish_reason != "content_filter":
        if finish_reason == "length":
            raise LLMInvalidResponse(f"{provider} reached the output limit with nothing written")
        raise LLMInvalidResponse(f"{provider} returned an empty completion")
    return Completed(finish_reason=finish_reason, usage=usage or estimate_usage(request, tally.output_chars))
