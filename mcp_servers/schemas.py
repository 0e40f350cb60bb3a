"""An MCP tool's input schema, checked as a source tool's is, and the Letta tool it becomes.

The check is ``tools.validation.check_parameter_schema`` (a valid JSON schema whose patterns
``re2`` can run in linear time). Health is Letta's: ``INVALID`` (refused for the model),
``NON_STRICT_ONLY`` (open objects or optional properties), ``STRICT_COMPLIANT``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from jsonschema.exceptions import SchemaError
from mcp.types import Tool as MCPTool

from tools.schema import TOOL_NAME
from tools.validation import UnsupportedPattern, check_parameter_schema

MAX_TOOL_NAME_CHARS = 48
DESTRUCTIVE_REASON = "the server marks this tool as destructive"


@dataclass(frozen=True)
class Health:
    status: str
    reasons: list[str] = field(default_factory=list)


def parameters_of(tool: MCPTool) -> dict[str, Any]:
    """The input schema as tool parameters: an object schema without the title the SDKs add."""
    schema = copy.deepcopy(tool.input_schema or {})
    schema.pop("title", None)
    schema.pop("$schema", None)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def health_of(tool: MCPTool) -> Health:
    parameters = parameters_of(tool)
    if not TOOL_NAME.match(tool.name):
        return Health("INVALID", [f"The name {tool.name!r} is not 1 to 64 letters, digits, '_' or '-'."])
    if parameters.get("type") != "object":
        return Health("INVALID", ['The input schema is not of "type": "object".'])
    try:
        check_parameter_schema(parameters)
    except SchemaError as exc:
        return Health("INVALID", [f"The input schema is not a valid JSON schema: {exc.message}"])
    except UnsupportedPattern as exc:
        return Health("INVALID", [f"The input schema cannot be checked in linear time: {exc}"])
    reasons = list(_non_strict(parameters, "parameters"))
    return Health("NON_STRICT_ONLY", reasons) if reasons else Health("STRICT_COMPLIANT")


def _non_strict(schema: Any, path: str) -> list[str]:
    if not isinstance(schema, dict):
        return []
    reasons: list[str] = []
    if schema.get("type") == "object":
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            reasons.append(f"{path} allows additional properties")
        optional = sorted(set(properties) - set(schema.get("required") or []))
        if optional:
            reasons.append(f"{path} has optional properties: {', '.join(optional)}")
        for name, child in properties.items():
            reasons.extend(_non_strict(child, f"{path}.{name}"))
    if isinstance(schema.get("items"), dict):
        reasons.extend(_non_strict(schema["items"], f"{path}[]"))
    return reasons


def annotations_of(tool: MCPTool) -> dict[str, Any]:
    """The tool's annotations with the protocol's names (``readOnlyHint``, ``destructiveHint`` …)."""
    if tool.annotations is None:
        return {}
    return tool.annotations.model_dump(by_alias=True, exclude_none=True)


def asks_by_default(tool: MCPTool) -> bool:
    """Whether calls wait for a person unless the agent's policy says otherwise: the server marks it destructive."""
    annotations = annotations_of(tool)
    return annotations.get("destructiveHint") is True and annotations.get("readOnlyHint") is not True


def mcp_tool_json(tool: MCPTool) -> dict[str, Any]:
    """The legacy live listing's item: the MCP tool as the server sent it, plus its ``health``."""
    body = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    health = health_of(tool)
    body["health"] = {"status": health.status, "reasons": health.reasons}
    return body
