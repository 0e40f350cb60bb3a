"""One model answer, assembled from the provider's events, and what it means for the loop."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.engine.approvals import may_need_approval, needs_approval
from agents.engine.events import ReasoningDeltaEvent, TextDeltaEvent, ToolCallDeltaEvent
from agents.engine.store import MessageDraft
from agents.llm.base import (
    Completed,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from agents.llm.completion import Answer, answer_problem

if TYPE_CHECKING:
    from agents.engine.events import EngineEvent
    from agents.engine.types import ModelToolCall, StoredToolCall
    from tools.base import ToolSpec

LOOP_INTERNAL_ARGUMENTS = ("request_heartbeat", "inner_thoughts")


def clean_arguments(raw: str) -> str:
    """Drop loop-internal fields a model may add; keep the model's text when it is not an object."""
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw
    if not isinstance(parsed, dict):
        return raw
    if any(key in parsed for key in LOOP_INTERNAL_ARGUMENTS):
        for key in LOOP_INTERNAL_ARGUMENTS:
            parsed.pop(key, None)
        return json.dumps(parsed)
    return raw or "{}"


@dataclass
class DeltaKind:
    kind: str
    text: str = ""
    signature: str | None = None
    index: int = 0
    tool_call_id: str | None = None
    name: str | None = None
    requires_approval: bool = False
    # Where a reasoning or text delta goes: the LettaMessage of the row it previews
    # (its index among the row's messages) and that message's length before it.
    part_index: int = 0
    offset: int = 0


def delta_event(delta: DeltaKind, run_id: Any, seq: int, message_id: Any, step_id: Any) -> EngineEvent:
    if delta.kind == "reasoning":
        return ReasoningDeltaEvent(
            run_id, seq, message_id, step_id, delta.text, delta.signature, delta.part_index, delta.offset
        )
    if delta.kind == "text":
        return TextDeltaEvent(run_id, seq, message_id, step_id, delta.text, delta.part_index, delta.offset)
    return ToolCallDeltaEvent(
        run_id,
        seq,
        message_id,
        step_id,
        delta.index,
        delta.tool_call_id,
        delta.name,
        delta.text or None,
        delta.requires_approval,
    )


@dataclass
class StepOutput:
    """What one model call produced, assembled from its events."""

    message_id: Any
    parts: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[ModelToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    completed: bool = False
    usage: Usage = field(default_factory=Usage)
    _call_index: dict[int, int] = field(default_factory=dict)
    # When the first and the last reasoning delta arrived (``time.monotonic()``), for "Thought for N s".
    _reasoning_first: float | None = None
    _reasoning_last: float | None = None

    @property
    def reasoning_ms(self) -> int | None:
        """Milliseconds from the first reasoning delta to the last, or ``None`` when nothing was reasoned."""
        if self._reasoning_first is None or self._reasoning_last is None:
            return None
        return round((self._reasoning_last - self._reasoning_first) * 1000)

    @property
    def text(self) -> str:
        return "".join(p["text"] for p in self.parts if p["type"] == "text")

    def _append_text(self, kind: str, text: str) -> None:
        if self.parts and self.parts[-1]["type"] == kind and not self.parts[-1].get("signature"):
            self.parts[-1]["text"] += text
        else:
            self.parts.append({"type": kind, "text": text, **({"signature": None} if kind == "reasoning" else {})})

    def _text_delta(self, kind: str, text: str, signature: str | None = None) -> DeltaKind:
        """The delta just appended to the last part, with that part's place among the row's messages."""
        last = self.parts[-1]
        index = sum(1 for p in self.parts[:-1] if p["type"] != "text" or p["text"])
        offset = len(last["text"]) - len(text)
        return DeltaKind(kind, text, signature=signature, part_index=index, offset=offset)

    def absorb(self, event: Any, specs: dict[str, ToolSpec]) -> DeltaKind | None:
        if isinstance(event, ReasoningDelta):
            now = time.monotonic()
            self._reasoning_first = self._reasoning_first if self._reasoning_first is not None else now
            self._reasoning_last = now
            self._append_text("reasoning", event.text)
            return self._text_delta("reasoning", event.text)
        if isinstance(event, ReasoningSignature):
            if self.parts and self.parts[-1]["type"] == "reasoning":
                self.parts[-1]["signature"] = event.signature
            else:
                self.parts.append({"type": "reasoning", "text": "", "signature": event.signature})
            return self._text_delta("reasoning", "", signature=event.signature)
        if isinstance(event, RedactedReasoning):
            self.parts.append({"type": "redacted_reasoning", "data": event.data})
            return None
        if isinstance(event, TextDelta):
            self._append_text("text", event.text)
            return self._text_delta("text", event.text)
        if isinstance(event, ToolCallStart):
            call_id = event.id or f"call_{uuid.uuid4().hex[:24]}"
            self._call_index[event.index] = len(self.tool_calls)
            self.tool_calls.append({"id": call_id, "name": event.name, "arguments": ""})
            return DeltaKind(
                "tool",
                index=event.index,
                tool_call_id=call_id,
                name=event.name,
                requires_approval=may_need_approval(specs.get(event.name)),
            )
        if isinstance(event, ToolCallArgumentsDelta):
            position = self._call_index.get(event.index)
            if position is None:
                return None
            call = self.tool_calls[position]
            call["arguments"] += event.fragment
            return DeltaKind(
                "tool",
                text=event.fragment,
                index=event.index,
                tool_call_id=call["id"],
                name=call["name"],
                requires_approval=may_need_approval(specs.get(call["name"])),
            )
        if isinstance(event, Completed):
            self.completed = True
            self.finish_reason = event.finish_reason
            self.usage = event.usage
        return None

    def content_parts(self) -> list[dict[str, Any]]:
        return [p for p in self.parts if p["type"] != "text" or p["text"]]

    def draft(self, step_id: Any, *, specs: dict[str, ToolSpec], notice: str | None, streamed: bool) -> MessageDraft:
        """The assistant row of this answer: its calls with clean arguments, each marked when it waits for
        a person; in its metadata the step's ``notice``, and how long it reasoned when that was ``streamed``
        (a non-streamed answer arrives whole, so its reasoning has no duration of its own)."""
        calls: list[StoredToolCall] = []
        for call in self.tool_calls:
            arguments = clean_arguments(call["arguments"])
            gated = needs_approval(specs.get(call["name"]), arguments)
            calls.append({"id": call["id"], "name": call["name"], "arguments": arguments, "requires_approval": gated})
        metadata: dict[str, Any] = {"notice": notice} if notice else {}
        if streamed and self.reasoning_ms is not None:
            metadata["reasoning_ms"] = self.reasoning_ms
        return MessageDraft(
            id=self.message_id,
            role="assistant",
            content=self.content_parts(),
            tool_calls=calls,
            step_id=step_id,
            metadata=metadata,
        )

    def problem(self) -> str | None:
        """Why this completion cannot be used, or ``None``."""
        answer = Answer(
            written=bool(self.text.strip() or self.tool_calls),
            reasoned=any(p["type"] != "text" for p in self.parts),
            ended=self.completed,
            finish_reason=self.finish_reason,
        )
        return answer_problem(answer, subject="The model")
