"""A token bucket for the frames one WebSocket may send (``CHAT_FRAME_BURST``, ``CHAT_FRAMES_PER_SECOND``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class FrameRate:
    """``burst`` frames at once, then ``per_second`` on average; ``allow`` spends one when it can."""

    burst: float
    per_second: float
    tokens: float = field(init=False)
    updated: float = field(init=False, default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.per_second)
        self.updated = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True
