"""Keeping one turn's context within the agent's window: sizing each request, and compacting.

The loop asks ``over_budget`` before each model call and ``compact`` when a request would
not fit or the provider said the prompt is too long; the plan and the summary request are
the pure functions of ``agents.engine.compaction``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.engine.compaction import (
    compaction_stats,
    is_summary,
    plan_compaction,
    request_tokens,
    row_tokens,
    summary_request,
)
from agents.engine.stop import StopReason
from agents.llm.base import Completed, LLMError, TextDelta, Usage

if TYPE_CHECKING:
    from agents.engine.context import ModelSettings
    from agents.engine.store import ConversationStore, MessageSnapshot
    from agents.llm.base import LLMClient, LLMRequest

SUMMARY_MAX_TOKENS = 1024
# A compaction for a request that did not fit aims below this share of the threshold.
COMPACTION_TARGET = 0.6
# The provider refused the prompt as too long (by how much is unknown): evict most of the conversation.
OVERFLOW_EVICT_SHARE = 0.7
# Letta's ``compaction_stats.trigger`` values: the provider refused the prompt; a request passed the threshold.
TRIGGER_OVERFLOW = "context_window_exceeded"
TRIGGER_THRESHOLD = "post_step_context_check"


class CompactionFailed(Exception):
    def __init__(self, stop_reason: StopReason, error: str) -> None:
        super().__init__(error)
        self.stop_reason = stop_reason
        self.error = error


@dataclass
class ContextWindow:
    """The context of one turn. ``rows`` is the turn's in-context list, replaced in place on a compaction."""

    store: ConversationStore
    llm: LLMClient
    settings: ModelSettings
    rows: list[MessageSnapshot]
    add_usage: Callable[[Usage], None]
    # The provider's prompt tokens for the last call, and how many rows the context had then.
    reported: tuple[int, int] | None = None

    def record(self, usage: Usage) -> None:
        """Remember what the provider counted for the call just made (estimates are not counts)."""
        if not usage.estimated:
            self.reported = (usage.prompt_tokens, len(self.rows))

    def size(self, request: LLMRequest) -> int:
        """The larger of a conservative estimate of the whole request and the provider's count
        for the last call plus an estimate of the rows added since."""
        size = request_tokens(request)
        if self.reported is not None:
            reported, rows_then = self.reported
            size = max(size, reported + sum(row_tokens(row) for row in self.rows[rows_then:]))
        return size

    def over_budget(self, request: LLMRequest) -> bool:
        """Whether ``request`` would pass the share of the window that triggers a compaction."""
        return self.size(request) > self.settings.context_window * self.settings.compaction_threshold

    async def compact(self, request: LLMRequest | None = None, *, overflowed: bool = False) -> MessageSnapshot | None:
        """Summarize the oldest part of the context into a row that heads it, and return that row
        (``None``: nothing can be evicted). Raises ``CompactionFailed``.

        Given the ``request`` that did not fit, it evicts enough to leave room for a few turns
        (below ``COMPACTION_TARGET`` of the threshold); after an overflow, most of the conversation.
        """
        settings = self.settings
        excess = 0
        if request is not None:
            excess = int(
                self.size(request) - settings.context_window * settings.compaction_threshold * COMPACTION_TARGET
            )
        share = max(settings.compaction_evict_share, OVERFLOW_EVICT_SHARE if overflowed else 0.0)
        plan = plan_compaction(self.rows, evict_share=share, at_least_tokens=excess)
        if plan is None:
            return None
        max_tokens = max(64, min(SUMMARY_MAX_TOKENS, settings.context_window // 8))
        text = await self._summarize(summary_request(plan, model=settings.model, max_tokens=max_tokens))
        stats = compaction_stats(
            plan,
            rows_before=len(self.rows),
            trigger=TRIGGER_OVERFLOW if overflowed else TRIGGER_THRESHOLD,
            context_window=settings.context_window,
            tokens_before=self.size(request) if request is not None else None,
        )
        rows = await self.store.compact(
            summary=text[: max_tokens * 4], keep_from_seq=plan.keep_from_seq, evicted=len(plan.evicted), stats=stats
        )
        self.rows[:] = rows
        self.reported = None
        return next(row for row in rows if is_summary(row))

    async def _summarize(self, request: LLMRequest) -> str:
        text = ""
        try:
            async for event in self.llm.generate(request, stream=False):
                if isinstance(event, TextDelta):
                    text += event.text
                elif isinstance(event, Completed):
                    self.add_usage(event.usage)
        except LLMError as exc:
            reason = StopReason.LLM_API_ERROR if exc.transport else StopReason.INVALID_LLM_RESPONSE
            raise CompactionFailed(reason, f"Summarizing the conversation failed: {exc}") from exc
        if not text.strip():
            raise CompactionFailed(StopReason.INVALID_LLM_RESPONSE, "The model returned an empty summary.")
        return text.strip()
