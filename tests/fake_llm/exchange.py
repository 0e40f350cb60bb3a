"""A provider-neutral reading of an incoming request: what the auto responder and renderers need."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from agents.llm.base import ToolSchema

Protocol = Literal["anthropic", "openai"]


@dataclass(frozen=True)
class ToolOutcomeSeen:
    name: str
    content: str
    is_error: bool


@dataclass(frozen=True)
class Exchange:
    """The last user-side message of a request, and the settings that shape the answer.

    ``user_text`` is the text the user wrote last (``None`` when the request ends
    with tool results and nothing after them); ``tool_results`` are the results
    in that last user-side message.
    """

    protocol: Protocol
    model: str
    stream: bool
    thinking: bool
    parallel_tool_calls: bool
    include_usage: bool
    tools: tuple[ToolSchema, ...]
    user_text: str | None
    tool_results: tuple[ToolOutcomeSeen, ...]
    prompt_chars: int


def read_anthropic(body: dict[str, Any]) -> Exchange:
    messages: list[dict[str, Any]] = body.get("messages") or []
    names = {
        block.get("id"): block.get("name")
        for message in messages
        if message.get("role") == "assistant"
        for block in _blocks(message)
        if block.get("type") == "tool_use"
    }
    user_text: str | None = None
    results: list[ToolOutcomeSeen] = []
    if messages and messages[-1].get("role") == "user":
        texts: list[str] = []
        for block in _blocks(messages[-1]):
            if block.get("type") == "tool_result":
                texts = []  # only text written after the results counts as a new request
                content = _text_of(block.get("content"))
                results.append(ToolOutcomeSeen(names.get(block.get("tool_use_id"), "tool"), content, _is_error(block)))
            elif block.get("type") == "text":
                texts.append(block.get("text", ""))
        user_text = "\n".join(texts) if texts else None
    tool_choice = body.get("tool_choice") or {}
    return Exchange(
        protocol="anthropic",
        model=str(body.get("model", "")),
        stream=body.get("stream") is True,
        thinking=(body.get("thinking") or {}).get("type") == "enabled",
        parallel_tool_calls=not tool_choice.get("disable_parallel_tool_use", False),
        include_usage=True,
        tools=tuple(
            ToolSchema(t.get("name", ""), t.get("description", ""), t.get("input_schema") or {})
            for t in body.get("tools") or []
        ),
        user_text=user_text,
        tool_results=tuple(results),
        prompt_chars=len(json.dumps(body)),
    )


def read_openai(body: dict[str, Any]) -> Exchange:
    messages: list[dict[str, Any]] = body.get("messages") or []
    names = {
        call.get("id"): (call.get("function") or {}).get("name")
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    }
    user_text: str | None = None
    results: list[ToolOutcomeSeen] = []
    if messages and messages[-1].get("role") == "user":
        user_text = _text_of(messages[-1].get("content"))
    else:
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            content = _text_of(message.get("content"))
            results.insert(0, ToolOutcomeSeen(names.get(message.get("tool_call_id"), "tool"), content, False))
    return Exchange(
        protocol="openai",
        model=str(body.get("model", "")),
        stream=body.get("stream") is True,
        thinking=bool(body.get("reasoning_effort")),
        parallel_tool_calls=body.get("parallel_tool_calls", True) is not False,
        include_usage=not body.get("stream") or bool((body.get("stream_options") or {}).get("include_usage")),
        tools=tuple(
            ToolSchema(f.get("name", ""), f.get("description", ""), f.get("parameters") or {})
            for f in ((t.get("function") or {}) for t in body.get("tools") or [])
        ),
        user_text=user_text,
        tool_results=tuple(results),
        prompt_chars=len(json.dumps(body)),
    )


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _is_error(block: dict[str, Any]) -> bool:
    return bool(block.get("is_error"))
