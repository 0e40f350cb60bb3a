"""What a built-in tool is, and the registry the runner looks them up in.

A built-in is plain async code of ours: it gets the validated arguments and the call's
``ToolContext``, returns a JSON-serializable value (a ``str`` is shown as-is) and raises
``ToolError`` for failures the model should read. It reaches data only through
organization-scoped querysets (``Model.objects.for_org(context.organization_id)``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tools.base import ToolContext

BuiltinRun = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]


@dataclass(frozen=True)
class BuiltinTool:
    name: str
    tool_type: str  # Letta's: letta_core, letta_builtin, letta_memory_core, …
    description: str
    parameters: dict[str, Any]
    run: BuiltinRun
    enable_parallel_execution: bool = False
    available: bool = True  # False: kept for Letta compatibility, every call is an honest error
    tags: tuple[str, ...] = field(default=())
    wall_seconds: Callable[[], float] | None = None
    """Its own time limit, read per call (a web request's settings); else ``TOOL_SANDBOX_WALL_SECONDS``."""
    in_base_set: bool = True
    """Part of Letta's base tools (``add-base-tools``, tools named at agent creation); else attached by onboarding."""

    @property
    def json_schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


class BuiltinRegistry:
    """An explicit, immutable list of built-ins; nothing registers itself."""

    def __init__(self, tools: Iterable[BuiltinTool]) -> None:
        self._tools: dict[str, BuiltinTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"Two built-in tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> BuiltinTool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[BuiltinTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def parameters(properties: dict[str, Any], required: Iterable[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def prop(json_type: str, description: str, **extra: Any) -> dict[str, Any]:
    return {"type": json_type, **extra, "description": description}
