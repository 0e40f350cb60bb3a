"""``LLMRequest`` → the Anthropic Messages API body and headers, the way Letta sends them.

See ``LETTA_WIRE.md`` ("What Letta sends to Anthropic"): ``system`` as text blocks,
extended thinking with temperature 1.0, ``tool_choice`` carrying
``disable_parallel_tool_use``, consecutive user-side turns merged into one user
message, and earlier thinking blocks sent back with their signatures. Cache
breakpoints mark the system prompt and the conversation so far. A tool result with
images sends its text and a note, then one ``image`` block (base64 source) per image,
as its ``content`` list.
"""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Any

from agents.llm.base import (
    AssistantTurn,
    ReasoningPart,
    RedactedReasoningPart,
    TextPart,
    ToolResultsTurn,
    UserTurn,
)

if TYPE_CHECKING:
    from agents.llm.base import LLMRequest, ToolResult, Turn

DEFAULT_MAX_TOKENS = 8192
MIN_THINKING_BUDGET = 1024
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
EPHEMERAL = {"type": "ephemeral"}
# What Letta puts first when a window starts with the agent's turn (an imported greeting, say):
# Anthropic wants the first message to be the user's.
DUMMY_FIRST_USER_MESSAGE = "User initializing bootup sequence."


def build_body(request: LLMRequest, *, stream: bool) -> dict[str, Any]:
    """The exact JSON body of ``POST /v1/messages`` for ``request``."""
    max_tokens = request.max_tokens or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {"model": request.model}
    if request.system:
        body["system"] = [{"type": "text", "text": request.system}]
    body["messages"] = to_messages(request.turns)
    if request.purpose == "turn":
        _mark_cache_breakpoints(body)
    if request.tools:
        body["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.parameters or {"type": "object", "properties": {}},
            }
            for tool in request.tools
        ]
        body["tool_choice"] = _tool_choice(request)
    if request.reasoning and _can_think(body["messages"]):
        budget = max(MIN_THINKING_BUDGET, request.reasoning_budget_tokens)
        if max_tokens <= budget:
            # Thinking counts against max_tokens; keep the requested room for the answer.
            max_tokens += budget
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["temperature"] = 1.0  # the only temperature Anthropic accepts with thinking on
    elif request.temperature is not None:
        body["temperature"] = request.temperature
    body["max_tokens"] = max_tokens
    if stream:
        body["stream"] = True
    return body


def _can_think(messages: list[dict[str, Any]]) -> bool:
    """Whether Anthropic accepts thinking for these messages: with thinking on, an assistant message
    whose tool calls the last message answers must open with its thinking. A turn written without
    thinking (an imported history, a model without reasoning) is answered without it, this step only.
    """
    if len(messages) < 2 or messages[-2]["role"] != "assistant":
        return True
    blocks = messages[-2]["content"]
    if not any(block["type"] == "tool_use" for block in blocks):
        return True
    return blocks[0]["type"] in ("thinking", "redacted_thinking")


def _mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Let Anthropic cache the prompt's prefix: tools and system (unchanged while memory is), and
    the conversation up to this request's last message (the next step's request starts with it)."""
    if body.get("system"):
        body["system"][-1]["cache_control"] = EPHEMERAL
    last = body["messages"][-1] if body["messages"] else None
    if last is not None and last["role"] == "user" and isinstance(last.get("content"), list) and last["content"]:
        # A copy: blocks are derived once per turn (``to_messages``) and shared by the requests after.
        last["content"][-1] = {**last["content"][-1], "cache_control": EPHEMERAL}


def build_headers(request: LLMRequest, *, stream: bool) -> dict[str, str]:
    """Extra HTTP headers: the thinking betas Letta enables."""
    if not request.reasoning:
        return {}
    betas = [FINE_GRAINED_TOOL_STREAMING_BETA, INTERLEAVED_THINKING_BETA] if stream else [INTERLEAVED_THINKING_BETA]
    return {"anthropic-beta": ",".join(betas)}


def _tool_choice(request: LLMRequest) -> dict[str, Any]:
    if request.tool_choice == "none":
        return {"type": "none"}
    # Anthropic refuses a forced tool ("any") while thinking is on; "auto" is the closest it allows.
    kind = "any" if request.tool_choice == "required" and not request.reasoning else "auto"
    return {"type": kind, "disable_parallel_tool_use": not request.parallel_tool_calls}


def to_messages(turns: tuple[Turn, ...]) -> list[dict[str, Any]]:
    """Anthropic ``messages``: roles alternate, so neighbouring same-role turns share one message.

    A turn's blocks are derived once (``Derived``) and shared by every request that holds the turn;
    nothing here changes a block once made.

    Tool results and a user text that follows them become one user message, as Letta sends it; a
    window that opens with the assistant gets Letta's bootup user message in front.
    """
    messages: list[dict[str, Any]] = []
    for turn in turns:
        role, blocks = turn.derive("anthropic blocks", partial(_blocks, turn))
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": list(blocks)})
    if messages and messages[0]["role"] != "user":
        messages.insert(0, {"role": "user", "content": _text_blocks(DUMMY_FIRST_USER_MESSAGE)})
    return messages


def _blocks(turn: Turn) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(turn, UserTurn):
        return "user", _text_blocks(turn.text)
    if isinstance(turn, ToolResultsTurn):
        return "user", [_tool_result_block(result) for result in turn.results]
    return "assistant", _assistant_blocks(turn)


def _assistant_blocks(turn: AssistantTurn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in turn.parts:
        if isinstance(part, ReasoningPart):
            # Anthropic verifies signatures; reasoning from another provider has none and is not sent.
            if part.signature:
                blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
        elif isinstance(part, RedactedReasoningPart):
            blocks.append({"type": "redacted_thinking", "data": part.data})
        elif isinstance(part, TextPart):
            blocks.extend(_text_blocks(part.text))
    for call in turn.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _arguments(call.arguments)})
    return blocks


def _text_blocks(text: str) -> list[dict[str, Any]]:
    # The API rejects empty and whitespace-only text blocks.
    return [{"type": "text", "text": text}] if text.strip() else []


def _tool_result_block(result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_call_id}
    if result.images:
        block["content"] = [
            *_text_blocks(result.content),
            {"type": "text", "text": images_note(len(result.images))},
            *(
                {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}
                for image in result.images
            ),
        ]
    elif result.content:
        block["content"] = result.content
    if result.is_error:
        block["is_error"] = True
    return block


def images_note(count: int) -> str:
    """What the text part of a result with images says: that they are attached."""
    return f"[{count} image{'s' if count != 1 else ''} returned by this tool call attached below]"


def _arguments(arguments: str) -> dict[str, Any]:
    """``tool_use.input`` must be an object; a call whose JSON was cut off is sent with none."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
