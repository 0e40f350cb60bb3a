"""Typed shapes of the JSON the engine keeps on ``Message`` rows and passes between its parts.

They are ``TypedDict``s: the dicts stored in the rows' JSON fields (and read back from
them) are these at run time, unchanged; only the type checker sees the difference.
``agents.models.Message`` describes where each one is stored.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

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
    elicitation: NotRequired[dict[str, Any]]
    """The question the tool asked the person when it ran (``tools.elicitation.request``): the call waits
    for the answer as an approval, then runs again with it."""


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


class StoredToolImage(TypedDict):
    """One item of a tool row's ``images``: an image a call returned, for models that take images."""

    tool_call_id: str
    mime_type: str
    data: str
    """Base64."""


Transport: TypeAlias = Literal["api", "chat", "expiry"]
"""How a decision reached the server: the REST API, the browser chat, or the expiry timer."""


class DecisionAudit(TypedDict):
    """Who answered a gated call, when, and how (DESIGN §13); stored with every decision.

    Rows written before the audit existed lack these keys: readers use ``.get``.
    """

    decided_by: str
    """For people to read: the user's email, ``API key <name>``, or ``Approval expiry``."""
    decided_by_user_id: int | None
    decided_by_api_key_id: int | None
    decided_at: str
    """ISO 8601."""
    transport: Transport


class StoredApprovalDecision(DecisionAudit):
    """Letta's ``ApprovalReturn``: a human's answer to one gated call, with its audit."""

    type: Literal["approval"]
    tool_call_id: str
    approve: bool
    reason: str | None
    original_arguments: dict[str, JsonValue] | None
    """The model's arguments when the decision edited them, else ``None``."""
    arguments: dict[str, JsonValue] | None
    """The edited arguments the call ran with, else ``None`` (it ran with the model's)."""
    always_allow: bool
    """The decision also stopped asking for this tool on this agent."""


class StoredClientReturn(DecisionAudit):
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
