"""Whether a model's answer can be used (``answer_problem``, the one rule), and how a provider
response ends: the check every client applies before ``Completed``."""

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


@dataclass(frozen=True)
class Answer:
    """What an answer carried, as far as its use goes."""

    written: bool  # text that is not blank, or a tool call
    reasoned: bool  # reasoning, or redacted reasoning
    ended: bool  # the provider closed it (a finish reason, or the stream's closing event)
    finish_reason: str | None


def answer_problem(answer: Answer, *, subject: str) -> str | None:
    """Why ``answer`` cannot be used, said of ``subject`` (the provider, or "The model"); ``None`` when it can.

    Content without an end counts as finished (some compatible servers omit it); nothing at
    all is an error. A reasoning-only answer can be used (Letta accepts it after a denial that
    asks the model to wait), unless the output limit cut it off before anything was written.
    """
    has_content = answer.written or answer.reasoned
    if not answer.ended:
        return None if has_content else f"{subject} stream ended without a terminal event and without content"
    if answer.finish_reason == "content_filter":
        return f"{subject}'s answer was stopped by the provider's content filter"
    if answer.finish_reason == "length" and not answer.written:
        return f"{subject} reached the output limit with nothing written"
    if not has_content:
        return f"{subject} returned an empty completion"
    return None


@dataclass
class ResponseTally:
    """Counts what a response has carried so far; fed every event a client yields."""

    wrote_text: bool = False
    text_chars: int = 0
    reasoning_chars: int = 0
    redacted_blocks: int = 0
    tool_calls: int = 0
    argument_chars: int = 0

    def note(self, event: LLMEvent) -> LLMEvent:
        if isinstance(event, TextDelta):
            self.wrote_text = self.wrote_text or bool(event.text.strip())
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
    """The closing event, or ``LLMInvalidResponse`` when the response is unusable (``answer_problem``).

    ``terminal`` says the provider ended the response properly (a stop reason or the
    stream's closing event). An answer the content filter stopped is passed on: the
    engine ends the turn with that reason.
    """
    answer = Answer(
        written=tally.wrote_text or tally.tool_calls > 0,
        reasoned=tally.reasoning_chars > 0 or tally.redacted_blocks > 0,
        ended=terminal,
        finish_reason=finish_reason,
    )
    problem = answer_problem(answer, subject=provider)
    if problem is not None and finish_reason != "content_filter":
        raise LLMInvalidResponse(problem)
    return Completed(finish_reason=finish_reason, usage=usage or estimate_usage(request, tally.output_chars))
