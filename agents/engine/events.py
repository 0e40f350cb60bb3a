"""The closed union of events a turn yields. Transports only adapt these.

Every event carries the ``run_id`` and its ``seq`` within the run. A
``MessageEvent`` is emitted only after its row is committed; deltas preview a
row that is not persisted yet (they share its pre-assigned ``message_id``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agents.engine.stop import StopReason
from agents.engine.store import MessageSnapshot


@dataclass(frozen=True)
class TurnUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    step_count: int = 0
    estimated: bool = False


@dataclass(frozen=True)
class RunEvent:
    """What every event carries: its run and its place in the run's stream."""

    run_id: Any
    seq: int


@dataclass(frozen=True)
class DeltaEvent(RunEvent):
    """A preview of a row not persisted yet: its pre-assigned ``message_id`` and its step."""

    message_id: Any
    step_id: Any


@dataclass(frozen=True)
class MessageEvent(RunEvent):
    message: MessageSnapshot
    # True when this row's content already went out as deltas (token streaming).
    streamed: bool = False
    type: Literal["message"] = "message"


@dataclass(frozen=True)
class ReasoningDeltaEvent(DeltaEvent):
    text: str
    signature: str | None = None
    # The LettaMessage of the row this previews, and its length before this delta.
    part_index: int = 0
    offset: int = 0
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True)
class TextDeltaEvent(DeltaEvent):
    text: str
    part_index: int = 0
    offset: int = 0
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ToolCallDeltaEvent(DeltaEvent):
    index: int
    tool_call_id: str | None
    name: str | None
    arguments_delta: str | None
    requires_approval: bool
    type: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True)
class RunFinishedEvent(RunEvent):
    stop_reason: StopReason
    usage: TurnUsage = field(default_factory=TurnUsage)
    error: str | None = None
    # The assistant row whose calls wait for a human, when the run stopped for approval.
    awaiting_approval: MessageSnapshot | None = None
    type: Literal["run_finished"] = "run_finished"


EngineEvent = MessageEvent | ReasoningDeltaEvent | TextDeltaEvent | ToolCallDeltaEvent | RunFinishedEvent
