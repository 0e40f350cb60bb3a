"""``LLMRequest`` → an OpenAI chat-completions body (also what compatible servers read).

A ``tool`` message is text only, so the images of a step's tool results follow its tool
messages as one ``user`` message: for each call with images, a text part naming the call,
then its images as ``image_url`` parts with ``data:`` URLs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.llm.base import AssistantTurn, TextPart, ToolResultsTurn, UserTurn

if TYPE_CHECKING:
    from agents.llm.base import LLMRequest, Turn


def build_body(request: LLMRequest, *, stream: bool, compatible_server: bool = False) -> dict[str, Any]:
    """The exact JSON body of ``POST /chat/completions``.

    ``compatible_server`` (a custom base URL) sends the widely supported
    ``max_tokens`` instead of OpenAI's ``max_completion_tokens``.
    """
    body: dict[str, Any] = {"model": request.model, "messages": to_messages(request)}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters or {"type": "object", "properties": {}},
                },
            }
            for tool in request.tools
        ]
        body["tool_choice"] = request.tool_choice
        # Only meaningful (and only accepted by some servers) when tools are offered.
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens:
        body["max_tokens" if compatible_server else "max_completion_tokens"] = request.max_tokens
    if request.reasoning and request.reasoning_effort:
        body["reasoning_effort"] = request.reasoning_effort
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def to_messages(request: LLMRequest) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for turn in request.turns:
        messages.extend(_messages(turn))
    return messages


def _messages(turn: Turn) -> list[dict[str, Any]]:
    if isinstance(turn, UserTurn):
        return [{"role": "user", "content": turn.text}]
    if isinstance(turn, ToolResultsTurn):
        messages = [{"role": "tool", "tool_call_id": r.tool_call_id, "content": r.content} for r in turn.results]
        return messages + _images_message(turn)
    return _assistant_message(turn)


def _images_message(turn: ToolResultsTurn) -> list[dict[str, Any]]:
    """The user message that carries the images of ``turn``'s results (none without images)."""
    parts: list[dict[str, Any]] = []
    for result in turn.results:
        if not result.images:
            continue
        count = len(result.images)
        noun = "image" if count == 1 else "images"
        parts.append(
            {"type": "text", "text": f"[{count} {noun} returned by tool call {result.tool_call_id} ({result.name})]"}
        )
        parts += [
            {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}
            for image in result.images
        ]
    return [{"role": "user", "content": parts}] if parts else []


def _assistant_message(turn: AssistantTurn) -> list[dict[str, Any]]:
    # Reasoning is not sent back: OpenAI keeps its own, and compatible servers reject
    # ``reasoning_content`` in input messages.
    text = "".join(part.text for part in turn.parts if isinstance(part, TextPart))
    if not text and not turn.tool_calls:
        return []
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments or "{}"}}
            for call in turn.tool_calls
        ]
    return [message]
