"""What the engine needs from tools: a spec per attached tool and one way to run a call.

The engine never touches ``Tool`` rows or processes; it gets ``ToolSpec`` values
and a ``ToolRunner``. ``tools.runtime.DefaultToolRunner`` is the implementation
(argument validation, built-in registry, sandboxed source execution, return limits).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class ToolSpec:
    name: str
    kind: Literal["source", "builtin", "client", "mcp"]
    json_schema: dict[str, Any]  # {"name", "description", "parameters": {...}}
    requires_approval: bool = False
    """Every call waits for a person (the agent's policy ``ask``)."""
    approval_condition: str = ""
    """Calls wait when this condition over their arguments holds (policy ``ask_when``; ``tools.conditions``)."""
    return_char_limit: int = 50_000
    source_code: str = ""
    tool_id: str = ""

    @property
    def description(self) -> str:
        return str(self.json_schema.get("description", ""))

    @property
    def parameters(self) -> dict[str, Any]:
        return self.json_schema.get("parameters") or {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ToolContext:
    """Who a call runs for. Built-in tools query only through ``organization``-scoped querysets."""

    organization_id: uuid.UUID
    agent_id: uuid.UUID
    run_id: uuid.UUID | None = None
    env_vars: dict[str, str] = field(default_factory=dict)
    conversation_id: uuid.UUID | None = None
    """The thread the call runs in: a conversation's, or ``None`` for the agent's default one (its isolated
    blocks are the ones memory tools edit)."""
    elicitation_replies: tuple[ElicitationReply, ...] = ()
    """A person's answers to what the tool asked on earlier runs of this call (``tools.elicitation``)."""


@dataclass(frozen=True)
class ElicitationReply:
    """The answer to an MCP server's question (an elicitation): the question as it was asked, and the answer."""

    message: str
    requested_schema: dict[str, Any]
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class ToolInputRequired(Exception):
    """The tool asks a person for input before it can finish (an MCP server's elicitation).

    ``request`` is what the engine stores with the call to ask it (``tools.elicitation``);
    ``error`` is the tool error the call becomes where it cannot wait for an answer.
    """

    def __init__(self, request: dict[str, Any], error: str) -> None:
        super().__init__(error)
        self.request = request
        self.error = error


@dataclass(frozen=True)
class ToolImage:
    """An image a tool returned, for models that take images: its mime type and base64 data."""

    mime_type: str
    data: str = field(repr=False)


@dataclass(frozen=True)
class ReturnWithImages:
    """A return value as text, with the images that came with it (an MCP result's image parts)."""

    text: str
    images: tuple[ToolImage, ...] = ()


@dataclass(frozen=True)
class ToolOutcome:
    """The result of one call.

    ``tool_return`` is the raw return value as text (what the wire's ``tool_return``
    shows); ``func_response`` is what the model reads (packaged, cut to the tool's
    ``return_char_limit`` with a visible notice).
    """

    status: Literal["success", "error"]
    tool_return: str
    func_response: str
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    duration_ms: int = 0
    write: StagedWrite | None = None
    """A built-in's database change, committed by the engine's store with the row holding this result."""
    images: tuple[ToolImage, ...] = ()
    """Images the call returned; the text (``tool_return``) describes each. Sent only to models that take images."""


StagedWrite = Callable[[Any], object]
"""A built-in's change, run by the store inside the transaction that stores the call's result; it gets
that tool row's id. It raises ``StaleWrite`` when what the tool checked no longer holds."""


class StaleWrite(Exception):
    """The data a staged write was checked against changed before it committed; the call is run again."""


@dataclass(frozen=True)
class Staged:
    """What a built-in returns when its change must commit with its result: the return value and the write."""

    value: Any
    write: StagedWrite


class ToolError(Exception):
    """A tool failed in a way the model can act on; becomes an error result, never a crash."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class MCPCaller(Protocol):
    """Runs an ``mcp`` tool on its organization's MCP server (``settings.TOOL_MCP_CALLER`` names one).

    Returns the result as text, or as text with images; raises ``ToolError`` for a failure the model should read.
    """

    async def __call__(
        self, spec: ToolSpec, arguments: dict[str, Any], context: ToolContext
    ) -> str | ReturnWithImages: ...


class ToolRunner(Protocol):
    async def run(self, spec: ToolSpec, arguments: str, context: ToolContext) -> ToolOutcome:
        """Validate ``arguments`` (JSON text) against the spec and execute the call.

        Never raises for a tool's own failure: bad arguments, exceptions, timeouts
        and limits all come back as ``status="error"`` with a message a model can act on.
        Raises ``ToolInputRequired`` when the call waits for a person's answer.
        """
        ...
