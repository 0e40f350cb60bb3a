"""The built-in demo model: offline, deterministic, no key.

It lets a new user see streaming, tool calls and approvals on first run. It
understands "call <tool> with key=value" (see ``agents.llm.intents``), reports
tool results in its reply, and otherwise answers with a short, clearly labelled
demo message. Usage is estimated.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.llm.base import (
    AssistantTurn,
    Completed,
    ReasoningDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallStart,
    ToolResultsTurn,
    UserTurn,
)
from agents.llm.intents import (
    ToolRequest,
    describe_tool_result,
    example_call,
    memory_blocks_in,
    parse_tool_requests,
)
from agents.llm.tokens import estimate_usage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    from agents.llm.base import LLMEvent, LLMRequest, ToolSchema

DEMO_LABEL = "Demo model (offline, no API key)"
DEFAULT_TOKEN_DELAY = 0.01
_TOKEN = re.compile(r"\s*\S+\s*")
_ARGUMENT_FRAGMENT = 12
_ECHO_LIMIT = 200
_SUMMARY_MESSAGES = 8
_SUMMARY_LIMIT = 400


@dataclass(frozen=True)
class DemoReply:
    reasoning: str
    text: str
    tool_calls: tuple[ToolRequest, ...] = field(default=())


class DemoClient:
    """An ``LLMClient`` for ``demo/<anything>`` handles.

    ``token_delay`` (seconds) paces streamed tokens so the browser shows them
    arriving; non-streamed calls never sleep.
    """

    provider = "demo"

    def __init__(self, *, token_delay: float = DEFAULT_TOKEN_DELAY) -> None:
        self.token_delay = token_delay

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        """What the demo model reads: no vendor body exists, so this describes its input."""
        last = request.turns[-1] if request.turns else None
        return {
            "demo": True,
            "label": DEMO_LABEL,
            "model": request.model,
            "stream": stream,
            "system": request.system,
            "turns": len(request.turns),
            "last_turn": last.role if last else None,
            "tools": [tool.name for tool in request.tools],
        }

    async def generate(self, request: LLMRequest, *, stream: bool) -> AsyncIterator[LLMEvent]:
        reply = plan_reply(request)
        for token in _tokens(reply.reasoning, whole=not stream):
            await self._pace(stream=stream)
            yield ReasoningDelta(token)
        for token in _tokens(reply.text, whole=not stream):
            await self._pace(stream=stream)
            yield TextDelta(token)
        arguments_chars = 0
        for index, call in enumerate(reply.tool_calls):
            arguments = json.dumps(call.arguments)
            arguments_chars += len(arguments)
            yield ToolCallStart(index=index, id=f"toolu_demo_{uuid.uuid4().hex[:20]}", name=call.name)
            step = _ARGUMENT_FRAGMENT if stream else len(arguments)
            for start in range(0, len(arguments), max(step, 1)):
                await self._pace(stream=stream)
                yield ToolCallArgumentsDelta(index=index, fragment=arguments[start : start + step])
        output_chars = len(reply.reasoning) + len(reply.text) + arguments_chars
        yield Completed(
            finish_reason="tool_calls" if reply.tool_calls else "stop",
            usage=estimate_usage(request, output_chars),
        )

    async def _pace(self, *, stream: bool) -> None:
        if stream and self.token_delay > 0:
            await asyncio.sleep(self.token_delay)


def plan_reply(request: LLMRequest) -> DemoReply:
    """The demo's whole answer to ``request``, decided from its last turn."""
    last = request.turns[-1] if request.turns else None
    if request.purpose == "summary":
        return DemoReply(reasoning="", text=_summary(last.text if isinstance(last, UserTurn) else ""))
    if isinstance(last, ToolResultsTurn):
        sentences = [describe_tool_result(r.name, r.content, is_error=r.is_error) for r in last.results]
        return DemoReply(
            reasoning="The tool results are back, so I will tell the user what they say.",
            text=" ".join(sentences),
        )
    if isinstance(last, UserTurn):
        blocks = memory_blocks_in(request.system)
        calls = tuple(
            _with_block_label(call, request.tools, blocks) for call in parse_tool_requests(last.text, request.tools)
        )
        if calls:
            names = ", ".join(dict.fromkeys(call.name for call in calls))
            return DemoReply(
                reasoning=f"The user asked me to call {names}, so I will make {_plural(len(calls), 'call')}.",
                text=f"Calling {names}.",
                tool_calls=calls,
            )
        return DemoReply(reasoning="The user wrote to me and asked for no tool, so I will answer.", text=_echo(request))
    if isinstance(last, AssistantTurn):
        return DemoReply(reasoning="I have already answered; I will wait for the user.", text="(demo) Anything else?")
    return DemoReply(reasoning="There is nothing to answer yet.", text="(demo) Send me a message to get started.")


def _with_block_label(call: ToolRequest, tools: Sequence[ToolSchema], blocks: Mapping[str, str]) -> ToolRequest:
    """A memory tool call that names no block edits the first block of the prompt, as a model would choose one."""
    schema = next((tool for tool in tools if tool.name == call.name), None)
    takes_label = schema is not None and "label" in (schema.parameters.get("properties") or {})
    if not takes_label or "label" in call.arguments or not blocks:
        return call
    return ToolRequest(call.name, {"label": next(iter(blocks)), **call.arguments})


def _echo(request: LLMRequest) -> str:
    last = request.turns[-1]
    said = last.text.strip() if isinstance(last, UserTurn) else ""
    if len(said) > _ECHO_LIMIT:
        said = said[:_ECHO_LIMIT] + "…"
    text = f"I am the demo model, running offline without an API key. You said: “{said}”."
    if request.tools:
        text += f" Try: {example_call(request.tools[0], memory_blocks_in(request.system))}."
    return text


def _summary(transcript: str) -> str:
    """A deterministic summary: how many user messages there were and the first words of the latest."""
    said = [
        line.removeprefix("User: ")
        for line in transcript.splitlines()
        if line.startswith("User: ") and not line.startswith("User: {")  # not the login notice
    ]
    gist = "; ".join(" ".join(text.split()[:6]) for text in said[-_SUMMARY_MESSAGES:])
    noun = "message" if len(said) == 1 else "messages"
    return f"(demo summary) {len(said)} earlier user {noun}: {gist}."[:_SUMMARY_LIMIT]


def _plural(count: int, noun: str) -> str:
    return f"one {noun}" if count == 1 else f"{count} {noun}s"


def _tokens(text: str, *, whole: bool) -> list[str]:
    if not text:
        return []
    return [text] if whole else _TOKEN.findall(text)
