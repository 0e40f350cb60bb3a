"""Keeping one turn's context within the agent's window: sizing each request, and compacting.

The loop asks ``over_budget`` before each model call and ``compact`` when a request would
not fit or the provider said the prompt is too long; the plan and the summary are
``agents.engine.compaction.compact``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.engine.compaction import TRIGGER_OVERFLOW, TRIGGER_THRESHOLD, compact, is_summary, row_tokens
from agents.llm.tokens import request_tokens

if TYPE_CHECKING:
    from agents.engine.context import ModelSettings
    from agents.engine.store import ConversationStore, MessageSnapshot
    from agents.llm.base import LLMClient, LLMRequest, Usage

# A compaction for a request that did not fit aims below this share of the threshold.
COMPACTION_TARGET = 0.6
# The provider refused the prompt as too long (by how much is unknown): evict most of the conversation.
OVERFLOW_EVICT_SHARE = 0.7


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
        size = self.size(request) if request is not None else None
        target = settings.context_window * settings.compaction_threshold * COMPACTION_TARGET
        compaction = await compact(
            self.llm,
            self.rows,
            model=settings.model,
            context_window=settings.context_window,
            evict_share=max(settings.compaction_evict_share, OVERFLOW_EVICT_SHARE if overflowed else 0.0),
            at_least_tokens=int(size - target) if size is not None else 0,
            trigger=TRIGGER_OVERFLOW if overflowed else TRIGGER_THRESHOLD,
            tokens_before=size,
            on_usage=self.add_usage,
        )
        if compaction is None:
            return None
        rows = await self.store.compact(
            summary=compaction.summary,
            keep_from_seq=compaction.plan.keep_from_seq,
            evicted=len(compaction.plan.evicted),
            stats=compaction.stats,
        )
        self.rows[:] = rows
        self.reported = None
        return next(row for row in rows if is_summary(row))
