"""Building requests and reading a client's events back into one answer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.llm.base import (
    AssistantTurn,
    Completed,
    LLMRequest,
    ReasoningDelta,
    ReasoningPart,
    ReasoningSignature,
    RedactedReasoning,
    RedactedReasoningPart,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallStart,
    ToolSchema,
    UserTurn,
)

if TYPE_CHECKING:
    from agents.llm.base import ContentPart, LLMClient, LLMEvent, Turn


def _one_argument_tool(name: str, description: str, argument: str, kind: str, about: str) -> ToolSchema:
    parameters = {
        "type": "object",
        "properties": {argument: {"type": kind, "description": about}},
        "required": [argument],
    }
    return ToolSchema(name=name, description=description, parameters=parameters)


SECRET_CODE_TOOL = _one_argument_tool(
    "get_secret_code_tool", "A tool that returns the secret code based on the input.", "input_text", "string",
    "The input text to process."
)  # fmt: skip
ROLL_DICE_TOOL = _one_argument_tool(
    "roll_dice_tool", "A tool that returns a random number between 1 and num_sides.", "num_sides", "integer",
    "The number of sides on the die."
)  # fmt: skip
SEED_SINGLE_CALL = (
    "This is an automated test message. Call the get_secret_code_tool to get the code for text 'hello world'."
)
SEED_PARALLEL_CALLS = (
    "This is an automated test message. Call the get_secret_code_tool 3 times in parallel for the following "
    "inputs: 'hello world', 'hello letta', 'hello test', and also call the roll_dice_tool once with a 16-sided dice."
)


def make_request(*turns: Turn | str, **options: Any) -> LLMRequest:
    """An ``LLMRequest``; plain strings become user turns."""
    options.setdefault("model", "test-model")
    options.setdefault("system", "You are a helpful test assistant.")
    return LLMRequest(turns=tuple(UserTurn(t) if isinstance(t, str) else t for t in turns), **options)


@dataclass
class Answer:
    """A client's events, assembled the way the engine reads them."""

    events: list[LLMEvent] = field(default_factory=list)

    def of(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.of(TextDelta))

    @property
    def reasoning(self) -> str:
        return "".join(e.text for e in self.of(ReasoningDelta))

    @property
    def signatures(self) -> list[str]:
        return [e.signature for e in self.of(ReasoningSignature)]

    @property
    def completed(self) -> Completed:
        last = self.events[-1]
        assert isinstance(last, Completed), f"the last event is {last!r}"
        return last

    @property
    def tool_calls(self) -> list[ToolCall]:
        starts: list[ToolCallStart] = self.of(ToolCallStart)
        arguments = {start.index: "" for start in starts}
        for delta in self.of(ToolCallArgumentsDelta):
            arguments[delta.index] += delta.fragment
        return [ToolCall(id=s.id, name=s.name, arguments=arguments[s.index]) for s in starts]

    @property
    def tool_arguments(self) -> list[tuple[str, dict[str, Any]]]:
        return [(call.name, json.loads(call.arguments)) for call in self.tool_calls]

    def as_turn(self) -> AssistantTurn:
        """The assistant turn the engine would store and send back."""
        parts: list[ContentPart] = []
        if self.reasoning or self.signatures:
            parts.append(ReasoningPart(self.reasoning, self.signatures[0] if self.signatures else None))
        parts.extend(RedactedReasoningPart(e.data) for e in self.of(RedactedReasoning))
        if self.text:
            parts.append(TextPart(self.text))
        return AssistantTurn(parts=tuple(parts), tool_calls=tuple(self.tool_calls))


async def collect(client: LLMClient, request: LLMRequest, *, stream: bool) -> Answer:
    answer = Answer()
    async for event in client.generate(request, stream=stream):
        answer.events.append(event)
    return answer
