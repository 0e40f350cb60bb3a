"""Messages between Letta's stored form (an agent file's ``messages``) and this server's rows.

Letta's message: ``role`` (system, user, assistant, tool, function, approval, summary),
typed ``content`` parts, OpenAI-style ``tool_calls`` (``{"id", "type": "function",
"function": {"name", "arguments"}}``) and ``tool_returns``. A row here keeps text and
reasoning parts, flat tool calls (``{"id", "name", "arguments"}``) and tool returns that
name their tool (``agents.models.Message``). The two functions are inverses on what
``letta_message`` writes, so an exported agent imports to the same rows.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from agentfiles.schema import mapping
from agents.models import MessageRole

if TYPE_CHECKING:
    from agents.models import Message


class RowFields(TypedDict):
    """The fields of a new ``Message`` row made from a Letta message."""

    role: str
    content: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]
    tool_returns: list[dict[str, Any]]
    approvals: list[dict[str, Any]]
    name: str
    otid: str
    metadata: dict[str, Any]


ROLES = {
    "system": MessageRole.SYSTEM,
    "user": MessageRole.USER,
    "assistant": MessageRole.ASSISTANT,
    "tool": MessageRole.TOOL,
    "function": MessageRole.TOOL,  # the name before OpenAI's "tool"
    "approval": MessageRole.APPROVAL,
    "summary": MessageRole.USER,  # a compaction summary, shown to the model as a user turn
}


def _part(part: Any) -> dict[str, Any] | None:
    """One content part as a row keeps it; ``None`` for parts with nothing to keep."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": str(part.get("text") or "")}
    if kind == "reasoning":
        return {"type": "reasoning", "text": str(part.get("reasoning") or ""), "signature": part.get("signature")}
    if kind == "redacted_reasoning":
        return {"type": "redacted_reasoning", "data": part.get("data") or ""}
    if kind in ("omitted_reasoning", "summarized_reasoning", "tool_call", "tool_return"):
        return None  # carried by tool_calls / tool_returns, or nothing a model can be shown again
    return dict(part)  # images and other parts travel as they are


def _call(call: Any) -> dict[str, Any] | None:
    if not isinstance(call, dict):
        return None
    function = mapping(call.get("function")) or call
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {"id": str(call.get("id") or ""), "name": str(function.get("name") or ""), "arguments": arguments}


def _text(content: list[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def _returns(message: dict[str, Any], content: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    """A tool message's returns, each naming its tool (from the call that asked for it)."""
    given = [r for r in message.get("tool_returns") or [] if isinstance(r, dict)]
    if not given:  # v1 files: the result is the content, the call id on the message
        given = [{"tool_call_id": message.get("tool_call_id"), "status": "success", "func_response": _text(content)}]
    returns = []
    for item in given:
        call_id = str(item.get("tool_call_id") or message.get("tool_call_id") or "")
        response = item.get("func_response")
        if response is None:
            response = item.get("tool_return") if item.get("tool_return") is not None else _text(content)
        returns.append(
            {
                "tool_call_id": call_id,
                "name": names.get(call_id) or str(message.get("name") or ""),
                "status": "error" if item.get("status") == "error" else "success",
                "tool_return": str(response),
                "func_response": str(response),
                "stdout": item.get("stdout"),
                "stderr": item.get("stderr"),
            }
        )
    return returns


def row_fields(message: dict[str, Any], names: dict[str, str]) -> RowFields:
    """A Letta message as a row's fields. ``names`` maps tool call ids to tool names, and learns
    this message's calls (so a later tool message finds its tool's name)."""
    role = ROLES.get(str(message.get("role")), MessageRole.USER)
    content = [p for p in map(_part, message.get("content") or []) if p is not None]
    calls = [c for c in map(_call, message.get("tool_calls") or []) if c is not None]
    names.update({call["id"]: call["name"] for call in calls})
    return RowFields(
        role=role,
        content=content,
        tool_calls=calls if role == MessageRole.ASSISTANT else [],
        tool_returns=_returns(message, content, names) if role == MessageRole.TOOL else [],
        approvals=[a for a in message.get("approvals") or [] if isinstance(a, dict)],
        name="" if role == MessageRole.TOOL else str(message.get("name") or "")[:200],
        otid=str(message.get("otid") or "")[:64],
        metadata={"kind": "summary"} if message.get("role") == "summary" else {},
    )


def _letta_part(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part.get("text", ""), "signature": None}
    if kind == "reasoning":
        return {
            "type": "reasoning",
            "is_native": True,
            "reasoning": part.get("text", ""),
            "signature": part.get("signature"),
        }
    return dict(part)


def letta_message(row: Message, *, file_id: str, agent_file_id: str) -> dict[str, Any]:
    """A row as Letta's stored message, as an agent file holds it."""
    returns = [
        {
            "tool_call_id": item.get("tool_call_id"),
            "status": item.get("status", "success"),
            "stdout": item.get("stdout"),
            "stderr": item.get("stderr"),
            "func_response": item.get("func_response")
            if item.get("func_response") is not None
            else item.get("tool_return"),
        }
        for item in row.tool_returns
    ]
    calls = [
        {"id": c.get("id"), "type": "function", "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
        for c in row.tool_calls
    ]
    role = "summary" if row.metadata.get("kind") == "summary" and row.role == MessageRole.USER else row.role
    return {
        "type": "message",
        "id": file_id,
        "role": role,
        "content": [_letta_part(part) for part in row.content],
        "name": row.name or None,
        "otid": row.otid or None,
        "sender_id": None,
        "batch_item_id": None,
        "group_id": None,
        "model": None,
        "agent_id": agent_file_id,
        "tool_calls": calls or None,
        "tool_call_id": returns[0]["tool_call_id"] if len(returns) == 1 else None,
        "tool_returns": returns,
        "created_at": row.created_at.isoformat(),
        "approve": None,
        "approval_request_id": None,
        "denial_reason": None,
        "approvals": row.approvals,
    }
