"""The Anthropic Messages API side of the fake: request checks, replies as JSON or SSE, errors.

Thinking blocks carry a signature derived from their text, and requests that send
a thinking block back with a wrong signature are refused, as Anthropic does.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING, Any

from tests.fake_llm.frames import fragments, new_id, pieces, sse, usage_counts

if TYPE_CHECKING:
    from tests.fake_llm.exchange import Exchange
    from tests.fake_llm.script import Reply

DEFAULT_REASONING = "Let me think about how to answer."
STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def sign(thinking: str) -> str:
    return base64.b64encode(hashlib.sha256(b"fake-llm:" + thinking.encode()).digest()).decode()


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": new_id("req_")}


def error_event(error_type: str, message: str) -> bytes:
    """The ``event: error`` Anthropic sends inside a stream (for example ``overloaded_error``)."""
    return sse({"type": "error", "error": {"type": error_type, "message": message}}, "error")


def content_blocks(reply: Reply, exchange: Exchange) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if exchange.thinking:
        thinking = reply.reasoning or DEFAULT_REASONING
        blocks.append({"type": "thinking", "thinking": thinking, "signature": sign(thinking)})
        if reply.redacted_reasoning:
            blocks.append({"type": "redacted_thinking", "data": reply.redacted_reasoning})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for name, arguments in reply.tool_calls:
        blocks.append({"type": "tool_use", "id": new_id("toolu_"), "name": name, "input": dict(arguments)})
    return blocks


def message(reply: Reply, exchange: Exchange, *, blocks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A whole (non-streamed) message."""
    finish = reply.resolved_finish_reason
    body: dict[str, Any] = {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": exchange.model,
        "content": content_blocks(reply, exchange) if blocks is None else blocks,
        "stop_reason": STOP_REASONS[finish] if finish else None,
        "stop_sequence": None,
    }
    counts = usage_counts(reply, exchange)
    if counts is not None:
        body["usage"] = {"input_tokens": counts[0], "output_tokens": counts[1], "cache_read_input_tokens": 0}
    return body


def stream(
    reply: Reply, exchange: Exchange, *, blocks: list[dict[str, Any]] | None = None, terminal: bool = True
) -> list[bytes]:
    """SSE frames with the real event names; ``terminal=False`` stops before ``message_delta``."""
    whole = message(reply, exchange, blocks=blocks)
    counts = usage_counts(reply, exchange)
    start = {**whole, "content": [], "stop_reason": None}
    if counts is not None:
        start["usage"] = {"input_tokens": counts[0], "output_tokens": 1, "cache_read_input_tokens": 0}
    frames = [sse({"type": "message_start", "message": start}, "message_start"), sse({"type": "ping"}, "ping")]
    for index, block in enumerate(whole["content"]):
        frames.extend(_block_frames(index, block))
    if terminal and whole["stop_reason"] is not None:
        delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
        }
        if counts is not None:
            delta["usage"] = {"output_tokens": counts[1]}
        frames.append(sse(delta, "message_delta"))
        frames.append(sse({"type": "message_stop"}, "message_stop"))
    return frames


def _block_frames(index: int, block: dict[str, Any]) -> list[bytes]:
    kind = block["type"]
    opening = {
        "text": {"type": "text", "text": ""},
        "thinking": {"type": "thinking", "thinking": "", "signature": ""},
        "tool_use": {"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}},
    }.get(kind, block)
    frames = [sse({"type": "content_block_start", "index": index, "content_block": opening}, "content_block_start")]
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"])]
    elif kind == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        deltas = [{"type": "input_json_delta", "partial_json": f} for f in fragments(json.dumps(block["input"]))]
    for delta in deltas:
        frames.append(sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"))
    frames.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return frames


def problems(body: dict[str, Any]) -> str | None:
    """Why Anthropic would refuse ``body`` with a 400, for the mistakes a client can make."""
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int):
        return "max_tokens: Field required"
    if body.get("tool_choice") and not body.get("tools"):
        return "tool_choice may only be specified while providing tools"
    thinking = body.get("thinking") or {}
    if thinking.get("type") == "enabled":
        problem = _thinking_problem(body, thinking, max_tokens)
        if problem:
            return problem
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    return _messages_problem(messages, thinking=thinking.get("type") == "enabled")


def _thinking_problem(body: dict[str, Any], thinking: dict[str, Any], max_tokens: int) -> str | None:
    budget = thinking.get("budget_tokens", 0)
    if budget < 1024:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if max_tokens <= budget:
        return "`max_tokens` must be greater than `thinking.budget_tokens`"
    if "temperature" in body and body["temperature"] != 1:
        return "`temperature` may only be set to 1 when thinking is enabled"
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def _messages_problem(messages: list[dict[str, Any]], *, thinking: bool) -> str | None:
    expected, pending = "user", set[str]()
    last_assistant: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        if msg.get("role") != expected:
            return f'messages.{i}.role: roles must alternate between "user" and "assistant", starting with "user"'
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if not blocks:
            return f"messages.{i}: all messages must have non-empty content"
        answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        if expected == "user":
            if pending - answered:
                return f"messages.{i}: tool_use ids were found without tool_result blocks: {sorted(pending - answered)}"
            if answered - pending:
                unexpected = sorted(answered - pending)
                return f"messages.{i}.content: unexpected tool_use_id found in tool_result blocks: {unexpected}"
        for j, block in enumerate(blocks):
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"messages.{i}.content.{j}.text: text content blocks must contain non-whitespace text"
            if block.get("type") == "thinking" and block.get("signature") != sign(block.get("thinking", "")):
                return f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
            if block.get("type") == "tool_use" and not isinstance(block.get("input"), dict):
                return f"messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary"
        if expected == "assistant":
            pending = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
            last_assistant = blocks
        expected = "assistant" if expected == "user" else "user"
    uses_tools = any(b.get("type") == "tool_use" for b in last_assistant)
    if thinking and uses_tools and last_assistant[0].get("type") not in ("thinking", "redacted_thinking"):
        return (
            "Expected `thinking` or `redacted_thinking`, but found `"
            f"{last_assistant[0].get('type')}`. When `thinking` is enabled, a final `assistant` message "
            "must start with a thinking block."
        )
    return None
