"""A turn's token usage: the sum of its model calls (summaries included), marked estimated when any part was."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.engine.events import TurnUsage
from agents.llm.base import Usage


@dataclass
class UsageTally:
    total: Usage = field(default_factory=Usage)

    def add(self, usage: Usage) -> None:
        self.total = Usage(
            prompt_tokens=self.total.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self.total.completion_tokens + usage.completion_tokens,
            reasoning_tokens=self.total.reasoning_tokens + usage.reasoning_tokens,
            cached_tokens=self.total.cached_tokens + usage.cached_tokens,
            estimated=self.total.estimated or usage.estimated,
        )

    def for_run(self, *, step_count: int) -> TurnUsage:
        """The usage a run reports (Letta's ``usage_statistics``)."""
        return TurnUsage(
            prompt_tokens=self.total.prompt_tokens,
            completion_tokens=self.total.completion_tokens,
            total_tokens=self.total.total_tokens,
            step_count=step_count,
            estimated=self.total.estimated,
        )
