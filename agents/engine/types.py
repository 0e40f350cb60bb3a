"""Typed shapes of the JSON the engine keeps on ``Message`` rows and passes between its parts.

They are ``TypedDict``s: the dicts stored in the rows' JSON fields (and read back from
them) are these at run time, unchanged; only the type checker sees the difference.
``agents.models.Message`` describes where each one is stored.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, TypedDict

JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
"""Any value that ``json.loads`` can return."""

ToolStatus: TypeAlias = Literal["success", "error"]


class ModelToolCall(TypedDict):
    """A tool call as the model made it, before the loop knows whether it is gated."""

    id: str
    name: str
    arguments: str
    """The JSON text of the arguments as the model wrote it: not parsed, possibly invalid."""


class StoredToolCall(ModelToolCall):
    """One item of an assistant row's ``tool_calls``."""

    requires_approval: bool


class StoredToolReturn(TypedDict):
    """One item of a tool row's ``tool_returns``: the result of one call, in call order."""

    tool_call_id: str
    name: str
    status: ToolStatus
    tool_return: str
    """The tool's return value as text: what the wire's ``tool_return`` shows."""
    func_response: str
    """What the model reads back: packaged and cut to the tool's limit."""
    stdout: list[str] | None
    stderr: list[str] | None


class StoredApprovalDecision(TypedDict):
    """Letta's ``ApprovalReturn``: a human's answer to one gated call."""

    type: Literal["approval"]
    tool_call_id: str
    approve: bool
    reason: str | None


class StoredClientReturn(TypedDict):
    """Letta's ``ToolReturn`` in an approval: the client ran the gated call itself and sends its result."""

    type: Literal["tool"]
    tool_call_id: str
    tool_return: JsonValue
    """As the client sent it; the loop turns a non-string value into JSON text."""
    status: ToolStatus
    stdout: list[str] | None
    stderr: list[str] | None


StoredApprovalItem: TypeAlias = StoredApprovalDecision | StoredClientReturn
"""One item of an approval row's ``approvals``; ``type`` tells which."""
