"""The OpenAI chat-completions side of the fake: request checks, replies as JSON or ``data:`` chunks, errors.

Reasoning goes out as ``reasoning_content``, the way DeepSeek-style compatible servers send it.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from tests.fake_llm.frames import fragments, new_id, pieces, usage_counts

if TYPE_CHECKING:
    from tests.fake_llm.exchange import Exchange
    from tests.fake_llm.script import Reply

DONE = b"data: [DONE]\n\n"
ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    429: ("requests", "rate_limit_exceeded"),
}


def error_body(status: int, message: str, *, context_window: bool = False) -> dict[str, Any]:
    kind, code = ERROR_TYPES.get(status, ("server_error", None))
    if context_window:
        code = "context_length_exceeded"
        message = "This model's maximum context length is 128000 tokens. However, your messages resulted in 210000."
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_event(error_type: str, message: str) -> bytes:
    """An error object in place of a chunk, as OpenAI-compatible servers send mid-stream."""
    error = {"message": message, "type": error_type, "param": None, "code": None}
    return f"data: {json.dumps({'error': error})}\n\n".encode()


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {"id": new_id("call_"), "type": "function", "function": {"name": name, "arguments": json.dumps(dict(args))}}
        for name, args in reply.tool_calls
    ]


def _usage(counts: tuple[int, int]) -> dict[str, Any]:
    return {
        "prompt_tokens": counts[0],
        "completion_tokens": counts[1],
        "total_tokens": counts[0] + counts[1],
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def completion(reply: Reply, exchange: Exchange) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    body: dict[str, Any] = {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": exchange.model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.resolved_finish_reason, "logprobs": None}],
    }
    counts = usage_counts(reply, exchange)
    if counts is not None:
        body["usage"] = _usage(counts)
    return body


def stream(reply: Reply, exchange: Exchange, *, terminal: bool = True) -> list[bytes]:
    """``data:`` chunks ending with ``data: [DONE]``; ``terminal=False`` sends no finish reason."""
    chunk_id, created = new_id("chatcmpl-"), int(time.time())

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        body = {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": exchange.model,
            "choices": choices,
            **extra,
        }
        return f"data: {json.dumps(body)}\n\n".encode()

    frames = [chunk({"role": "assistant", "content": ""})] if terminal or reply.text else []
    frames += [chunk({"reasoning_content": piece}) for piece in pieces(reply.reasoning or "")]
    frames += [chunk({"content": piece}) for piece in pieces(reply.text)]
    for index, call in enumerate(_tool_calls(reply)):
        opening = {"index": index, "id": call["id"], "type": "function"}
        frames.append(
            chunk({"tool_calls": [{**opening, "function": {"name": call["function"]["name"], "arguments": ""}}]})
        )
        for fragment in fragments(call["function"]["arguments"]):
            frames.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}))
    finish = reply.resolved_finish_reason
    if terminal and finish is not None:
        frames.append(chunk({}, finish))
    counts = usage_counts(reply, exchange)
    if exchange.include_usage and counts is not None:
        frames.append(chunk(None, usage=_usage(counts)))
    frames.append(DONE)
    return frames


def problems(body: dict[str, Any]) -> str | None:
    """Why OpenAI would refuse ``body`` with a 400, for the mistakes a client can make."""
    if not isinstance(body.get("model"), str):
        return "you must provide a model parameter"
    if "parallel_tool_calls" in body and not body.get("tools"):
        return "Invalid value for 'parallel_tool_calls': only allowed when 'tools' are specified."
    if body.get("stream_options") and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'"
    pending: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                return f"messages.[{i}].role: 'tool' must respond to a preceding message with 'tool_calls'."
            pending.discard(message["tool_call_id"])
            continue
        if pending:
            missing = ", ".join(sorted(pending))
            return f"An assistant message with 'tool_calls' must be followed by tool messages responding to: {missing}"
        if role == "assistant":
            if not message.get("content") and not message.get("tool_calls"):
                return f"messages.[{i}]: an assistant message needs 'content' or 'tool_calls'."
            pending = {call.get("id") for call in message.get("tool_calls") or []}
        elif role not in ("system", "developer", "user"):
            return f"messages.[{i}].role: invalid role {role!r}"
    return None
