"""Test doubles for collaborators injected into the engine: a scripted model and a recording tool runner."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from agents.llm.base import (
    Completed,
    LLMEvent,
    LLMRequest,
    ReasoningDelta,
    ReasoningSignature,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from tools.base import ToolContext, ToolOutcome, ToolSpec


def reply(
    text: str = "",
    *,
    reasoning: str = "",
    signature: str | None = "sig",
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None,
    finish: str | None = "stop",
    usage: tuple[int, int] | None = (10, 5),
    complete: bool = True,
    call_ids: list[str] | None = None,
) -> list[LLMEvent]:
    """The events of one scripted model answer; text arrives in small deltas."""
    events: list[LLMEvent] = []
    if reasoning:
        events.append(ReasoningDelta(reasoning))
        if signature:
            events.append(ReasoningSignature(signature))
    for start in range(0, len(text), 4):
        events.append(TextDelta(text[start : start + 4]))
    for index, (name, arguments) in enumerate(tool_calls or []):
        call_id = call_ids[index] if call_ids else f"call_{name}_{index}"
        events.append(ToolCallStart(index=index, id=call_id, name=name))
        raw = json.dumps(arguments)
        events.append(ToolCallArgumentsDelta(index=index, fragment=raw[: len(raw) // 2]))
        events.append(ToolCallArgumentsDelta(index=index, fragment=raw[len(raw) // 2 :]))
    if complete:
        reason = finish if finish != "stop" or not tool_calls else "tool_calls"
        events.append(
            Completed(
                finish_reason=reason,  # type: ignore[arg-type]
                usage=Usage(prompt_tokens=usage[0], completion_tokens=usage[1]) if usage else Usage(),
            )
        )
    return events


@dataclass
class ScriptedLLM:
    """Answers each call with the next scripted reply; an exception in the script is raised instead."""

    script: list[list[LLMEvent] | Exception]
    provider: str = "scripted"
    requests: list[LLMRequest] = field(default_factory=list)

    async def generate(self, request: LLMRequest, *, stream: bool) -> AsyncIterator[LLMEvent]:
        self.requests.append(request)
        if not self.script:
            raise AssertionError("ScriptedLLM ran out of replies")
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        for event in item:
            yield event

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        return {"model": request.model, "turns": len(request.turns), "stream": stream}


@dataclass
class RecordingToolRunner:
    """Runs plain Python callables by tool name and records every execution."""

    functions: dict[str, Callable[..., Any]]
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def run(self, spec: ToolSpec, arguments: str, context: ToolContext) -> ToolOutcome:
        parsed = json.loads(arguments or "{}")
        self.calls.append((spec.name, parsed))
        try:
            value = self.functions[spec.name](**parsed)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            return ToolOutcome(status="error", tool_return=message, func_response=message)
        text = value if isinstance(value, str) else json.dumps(value)
        return ToolOutcome(
            status="success", tool_return=text, func_response=json.dumps({"status": "OK", "message": text})
        )
