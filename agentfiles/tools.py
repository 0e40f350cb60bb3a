"""An agent file's tools as this organization's ``Tool`` rows.

Built-ins are matched by name against this server's registry; custom tools become source
tools whose schema is derived from their source (``tools.schema``), so what a model is
offered is what the code takes. Source that does not parse is refused; a tool this server
cannot describe from its source (Letta's injected ``agent_state``, an annotation it does not
know) keeps the file's schema and is reported. MCP tools and TypeScript tools are kept in the
file's record and reported, not attached.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import transaction

from agentfiles.schema import AgentFileError, mapping
from tools.builtins import default_registry
from tools.models import DEFAULT_RETURN_CHAR_LIMIT, Tool, ToolKind
from tools.schema import TOOL_NAME, ToolSourceError
from tools.services import ToolValidationError, builtin_tools_named, tool_upsert_from_source

if TYPE_CHECKING:
    from accounts.models import Organization, User

# A ``ToolSourceError`` that means the file is wrong, not that this server describes less than Letta.
_BROKEN_SOURCE = ("syntax error", "the source code", "no public", "several public", "the function name")


@dataclass
class ToolImport:
    """The rows an agent file's tools became (by file id), and what the import must say about them."""

    tools: dict[str, Tool] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def import_tools(
    *, organization: Organization, entries: list[dict[str, Any]], override_existing: bool, created_by: User | None
) -> ToolImport:
    result = ToolImport()
    for entry in entries:
        tool = _import_tool(
            organization, entry, override_existing=override_existing, created_by=created_by, result=result
        )
        if tool is not None:
            result.tools[entry["id"]] = tool
    return result


def _is_builtin(entry: dict[str, Any]) -> bool:
    tool_type = str(entry.get("tool_type") or "custom")
    return tool_type.startswith("letta_") or (tool_type != "custom" and not (entry.get("source_code") or "").strip())


def _import_tool(
    organization: Organization,
    entry: dict[str, Any],
    *,
    override_existing: bool,
    created_by: User | None,
    result: ToolImport,
) -> Tool | None:
    name = str(entry["name"])
    metadata = mapping(entry.get("metadata_"))
    if entry.get("tool_type") == "external_mcp" or "mcp" in metadata:
        result.warnings.append(
            f"Tool {name!r} comes from an MCP server; it is kept in the file's record, not attached."
        )
        return None
    if _is_builtin(entry):
        return _builtin(organization, name, result)
    if entry.get("source_type") == "typescript":
        result.warnings.append(f"Tool {name!r} is TypeScript, which this server does not run; it was not attached.")
        return None
    source = entry.get("source_code")
    if not isinstance(source, str) or not source.strip():
        raise AgentFileError(f"Tool {name!r} has no source code.")
    try:
        ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line else ""
        raise AgentFileError(f"Tool {name!r}: its source does not parse: {getattr(exc, 'msg', exc)}{where}.") from exc
    existing = Tool.objects.for_org(organization).filter(name=name).first()
    if existing is not None and not override_existing:
        return existing
    try:
        return tool_upsert_from_source(
            organization=organization,
            source_code=source,
            created_by=created_by,
            default_requires_approval=bool(entry.get("default_requires_approval")),
            description=entry.get("description") if isinstance(entry.get("description"), str) else None,
            tags=[tag for tag in entry.get("tags") or [] if isinstance(tag, str)],
            return_char_limit=_char_limit(entry),
            name=name,
        )
    except ToolSourceError as exc:
        if exc.message.startswith(_BROKEN_SOURCE):
            raise AgentFileError(f"Tool {name!r}: {exc}.") from exc
        result.warnings.append(
            f"Tool {name!r} keeps the file's schema: {exc}; its calls may fail until its source is changed."
        )
        return _with_file_schema(organization, entry, source, created_by=created_by)
    except ToolValidationError as exc:
        raise AgentFileError(f"Tool {name!r}: {exc}") from exc


def _char_limit(entry: dict[str, Any]) -> int:
    limit = entry.get("return_char_limit")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else DEFAULT_RETURN_CHAR_LIMIT


def _builtin(organization: Organization, name: str, result: ToolImport) -> Tool | None:
    builtin = default_registry().get(name)
    if builtin is None or not builtin.available:
        why = "is not available on this server" if builtin is not None else "does not exist on this server"
        result.warnings.append(f"Built-in tool {name!r} {why}; it was not attached.")
        return None
    found = builtin_tools_named(organization=organization, names=[name])
    if not found:
        result.warnings.append(f"Tool {name!r}: the organization has a tool of its own by that name; it was used.")
        return Tool.objects.for_org(organization).filter(name=name).first()
    return found[0]


def _with_file_schema(
    organization: Organization, entry: dict[str, Any], source: str, *, created_by: User | None
) -> Tool:
    """A source tool whose schema is the file's (Letta derived it; this server could not)."""
    name = str(entry["name"])
    if not TOOL_NAME.match(name):
        raise AgentFileError(f"Tool {name!r}: the name cannot be a tool name.")
    given = mapping(entry.get("json_schema"))
    description = str(entry.get("description") or given.get("description") or "")
    parameters = mapping(given.get("parameters"))
    schema = {
        "name": name,
        "description": description,
        "parameters": parameters or {"type": "object", "properties": {}, "required": []},
    }
    fields = {
        "json_schema": schema,
        "description": description,
        "source_code": source,
        "kind": ToolKind.SOURCE,
        "tool_type": "custom",
        "default_requires_approval": bool(entry.get("default_requires_approval")),
        "return_char_limit": _char_limit(entry),
        "tags": [tag for tag in entry.get("tags") or [] if isinstance(tag, str)],
    }
    with transaction.atomic():
        tool = Tool.objects.for_org(organization).select_for_update().filter(name=name).first()
        if tool is None:
            return Tool.objects.create(organization=organization, name=name, created_by=created_by, **fields)
        if tool.kind != ToolKind.SOURCE:
            raise AgentFileError(f"Tool {name!r}: a {tool.get_kind_display().lower()} by that name already exists.")
        for key, value in fields.items():
            setattr(tool, key, value)
        tool.save()
        return tool
