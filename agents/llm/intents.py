"""The plain-English conventions the demo model (and the test fake server) understand.

``parse_tool_requests`` reads "call <tool> with key=value" and Letta's test phrasing
("Call the get_secret_code_tool to get the code for text 'hello world'");
``describe_tool_result`` words a tool's result so its value (or a denial's reason)
appears in the reply. Both are deterministic.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from agents.llm.base import ToolSchema

MAX_REPEATS = 10

_CALL = re.compile(r"\bcall(?:\s+the)?\s+`?(?P<name>[A-Za-z_][A-Za-z0-9_]*)`?", re.IGNORECASE)
_PAIR = re.compile(r"(?P<key>[A-Za-z_]\w*)\s*[=:]\s*(?P<value>'[^']*'|\"[^\"]*\"|[^\s,;]+)")
# Quotes that are not apostrophes ("don't" is not a quoted string).
_QUOTED = re.compile(r"(?<!\w)'([^']+)'(?!\w)|\"([^\"]+)\"")
# A number that is not a repeat count ("3 times").
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\d)(?!\.\d)(?!\s*(?:times|x)\b)")
_TIMES = re.compile(r"\b(\d+)\s+times\b", re.IGNORECASE)
_TRUE = {"true", "yes", "on", "1"}


@dataclass(frozen=True)
class ToolRequest:
    name: str
    arguments: dict[str, Any]


def parse_tool_requests(text: str, tools: Sequence[ToolSchema]) -> list[ToolRequest]:
    """The tool calls ``text`` asks for, in order, for tools present in ``tools``.

    Each "call <name>" starts a segment that runs to the next one. In a segment,
    explicit ``key=value`` pairs win; otherwise quoted strings fill string
    parameters and numbers fill numeric ones. One string parameter with several
    quoted values ("for the inputs 'a', 'b', 'c'") means one call per value.
    Values are coerced to the parameter's JSON-schema type.
    """
    by_name: dict[str, ToolSchema] = {}
    for tool in tools:
        for alias in _aliases(tool.name):
            by_name.setdefault(alias, tool)
    mentions = [(m, by_name[m["name"].lower()]) for m in _CALL.finditer(text) if m["name"].lower() in by_name]
    requests: list[ToolRequest] = []
    for position, (match, tool) in enumerate(mentions):
        end = mentions[position + 1][0].start() if position + 1 < len(mentions) else len(text)
        requests.extend(ToolRequest(tool.name, args) for args in _argument_sets(tool, text[match.end() : end]))
    return requests


def _aliases(name: str) -> list[str]:
    lowered = name.lower()
    return [lowered, lowered.removesuffix("_tool") if lowered.endswith("_tool") else f"{lowered}_tool"]


def _argument_sets(tool: ToolSchema, segment: str) -> list[dict[str, Any]]:
    properties: dict[str, dict[str, Any]] = tool.parameters.get("properties") or {}
    explicit = _explicit_arguments(segment, properties)
    if explicit:
        return explicit
    strings = [key for key, schema in properties.items() if schema.get("type", "string") == "string"]
    numerics = [key for key, schema in properties.items() if schema.get("type") in ("integer", "number")]
    quoted = [single or double for single, double in _QUOTED.findall(segment)]
    numbers = _NUMBER.findall(_QUOTED.sub(" ", segment))
    base = {key: coerce(value, properties[key]) for key, value in zip(numerics, numbers, strict=False)}
    if len(strings) == 1 and len(quoted) > 1:
        return [{**base, strings[0]: value} for value in quoted[:MAX_REPEATS]]
    arguments = {**base, **{key: value for key, value in zip(strings, quoted, strict=False)}}
    times = _TIMES.search(segment)
    repeats = min(int(times[1]), MAX_REPEATS) if times else 1
    return [dict(arguments) for _ in range(max(repeats, 1))]


def _explicit_arguments(segment: str, properties: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    sets: list[dict[str, Any]] = []
    for match in _PAIR.finditer(segment):
        key = match["key"]
        if key not in properties:
            continue
        if not sets or key in sets[-1]:
            sets.append({})  # a repeated key starts the next call
        sets[-1][key] = coerce(_unquote(match["value"]), properties[key])
    return sets


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value.rstrip(".!?")


def coerce(value: str, schema: dict[str, Any]) -> Any:
    """``value`` as the JSON-schema ``type`` asks; left as text when it does not parse."""
    kind = schema.get("type", "string")
    try:
        if kind == "integer":
            return int(float(value))
        if kind == "number":
            return float(value)
        if kind == "boolean":
            return value.strip().lower() in _TRUE
        if kind in ("array", "object"):
            return json.loads(value)
    except ValueError:
        return value
    return value


_BLOCK = re.compile(
    r"^<(?P<label>[^<>/\s]+)>\n<description>\n.*?<value>\n(?P<value>.*?)\n</value>\n</(?P=label)>",
    re.DOTALL | re.MULTILINE,
)
_LINE_NUMBER = re.compile(r"^\d+→ ", re.MULTILINE)


def memory_blocks_in(system: str) -> dict[str, str]:
    """The core memory blocks (label → value) a compiled system prompt shows (``agents.memory.prompt``)."""
    start, end = system.find("<memory_blocks>"), system.find("</memory_blocks>")
    if start < 0 or end < 0:
        return {}
    section = system[start:end]
    return {m["label"]: _LINE_NUMBER.sub("", m["value"]) for m in _BLOCK.finditer(section)}


def example_call(tool: ToolSchema, blocks: Mapping[str, str] | None = None) -> str:
    """A sentence that makes ``parse_tool_requests`` call ``tool``: "call roll_dice with num_sides=6".

    A memory tool's example names a real block of ``blocks`` (label → value, in order): its
    label (or ``/memories/<label>`` path), and text that occurs in it where the tool replaces text.
    """
    properties: dict[str, dict[str, Any]] = tool.parameters.get("properties") or {}
    required = tool.parameters.get("required") or list(properties)
    samples = {"integer": "6", "number": "1.5", "boolean": "true"}
    label, value = next(iter((blocks or {}).items()), ("", ""))
    known = {"label": label, "path": f"/memories/{label}" if label else ""}
    if value.strip():
        known["old_str"] = known["old_content"] = value.strip().split("\n")[0].split(". ")[0][:40]
    if tool.name == "memory" and label:
        required = ["command", "path", "insert_text"]
        known["command"] = "insert"
    pairs = []
    for key in required:
        sample = samples.get(properties.get(key, {}).get("type", "string"))
        pairs.append(f"{key}={sample or repr(known.get(key) or 'hello world')}")
    return f"call {tool.name} with {' and '.join(pairs)}" if pairs else f"call {tool.name}"


def unwrap_tool_output(content: str) -> str:
    """The readable part of a tool result; Letta packages it as ``{"status", "message", "time"}``."""
    try:
        value = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return content
    if isinstance(value, dict) and "message" in value:
        return str(value["message"])
    return content


def describe_tool_result(name: str, content: str, *, is_error: bool) -> str:
    """One sentence: "get_secret_code says the secret code is 42.", "roll_dice returned 4.", or why it did not run."""
    message = unwrap_tool_output(content).strip()
    if is_error:
        reason = message.removeprefix("Error:").strip()
        verb = "was denied" if "denied" in reason.lower() else "failed"
        return f"The call to {name} {verb}: {reason}"
    noun = name.removesuffix("_tool").removeprefix("get_").replace("_", " ") if name.startswith("get_") else ""
    return f"{name} says the {noun} is {message}." if noun else f"{name} returned {message}."
