"""Writes for tools: create, update, upsert from source, and the built-in set of an organization.

Names are unique per organization. A source tool's name is its function's name (the
sandbox calls it by that name), and its ``json_schema`` is derived from the source
unless the client gives parameters (``args_json_schema``) or a whole schema.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from jsonschema.exceptions import SchemaError

from tools.builtins import DEMO_TOOLS, BuiltinRegistry, BuiltinTool, base_registry
from tools.models import Tool, ToolKind
from tools.schema import TOOL_NAME, derive_tool_schema
from tools.validation import UnsupportedPattern, check_parameter_schema

if TYPE_CHECKING:
    from accounts.models import Organization, User

EDITABLE_FIELDS = frozenset(
    {
        "description",
        "tags",
        "return_char_limit",
        "default_requires_approval",
        "enable_parallel_execution",
        "metadata",
        "tool_type",
        "source_type",
    }
)
BUILTIN_EDITABLE_FIELDS = frozenset(
    {"tags", "return_char_limit", "default_requires_approval", "enable_parallel_execution", "metadata"}
)


class ToolValidationError(ValueError):
    """A tool write was refused; the message says why."""


class ToolNameTaken(ToolValidationError):
    pass


class InvalidToolSchema(ToolValidationError):
    pass


def tool_upsert_from_source(
    *,
    organization: Organization,
    source_code: str,
    created_by: User | None = None,
    default_requires_approval: bool | None = None,
    args_json_schema: dict[str, Any] | None = None,
    description: str | None = None,
    tags: list[str] | None = None,
    return_char_limit: int | None = None,
    name: str | None = None,
) -> Tool:
    """Create or update the organization's source tool named after the function (Letta's ``PUT /v1/tools/``).

    ``name`` picks the function when the source defines several public ones. ``None``
    arguments leave the stored value alone (or take the default for a new tool).
    Raises ``ToolSourceError`` for bad source, ``ToolValidationError`` for the rest.
    """
    schema = _source_schema(source_code, function_name=name, args_json_schema=args_json_schema)
    if description is not None:
        schema["description"] = description
    _check_common(tags=tags, return_char_limit=return_char_limit)
    with transaction.atomic():
        tool = _locked(organization, schema["name"])
        if tool is None:
            try:
                with transaction.atomic():
                    return Tool.objects.create(
                        organization=organization,
                        name=schema["name"],
                        description=schema["description"],
                        json_schema=schema,
                        args_json_schema=args_json_schema,
                        kind=ToolKind.SOURCE,
                        source_code=source_code,
                        default_requires_approval=bool(default_requires_approval),
                        tags=tags or [],
                        created_by=created_by,
                        **({"return_char_limit": return_char_limit} if return_char_limit is not None else {}),
                    )
            except IntegrityError:
                tool = _locked(organization, schema["name"])  # created meanwhile by a concurrent upsert
                if tool is None:
                    raise
        if tool.kind != ToolKind.SOURCE:
            raise ToolNameTaken(f"A {tool.get_kind_display().lower()} named {tool.name!r} already exists.")
        tool.source_code = source_code
        tool.json_schema = schema
        tool.description = schema["description"]
        tool.args_json_schema = args_json_schema
        if default_requires_approval is not None:
            tool.default_requires_approval = default_requires_approval
        if tags is not None:
            tool.tags = tags
        if return_char_limit is not None:
            tool.return_char_limit = return_char_limit
        tool.save()
        return tool


def tool_create(
    *,
    organization: Organization,
    source_code: str = "",
    json_schema: dict[str, Any] | None = None,
    kind: str = ToolKind.SOURCE,
    created_by: User | None = None,
    **fields: Any,
) -> Tool:
    """Create a source or client-side tool; ``ToolNameTaken`` if the organization has one by that name.

    ``fields``: ``name`` (for a client tool without ``json_schema``, or to pick the
    function of a source tool), ``args_json_schema`` and any of ``EDITABLE_FIELDS``.
    Built-in tools come from ``base_tools_upsert`` only.
    """
    _check_field_names(fields, EDITABLE_FIELDS | {"name", "args_json_schema"})
    args_json_schema = fields.pop("args_json_schema", None)
    name = fields.pop("name", None)
    if kind == ToolKind.SOURCE:
        schema = _source_schema(source_code, function_name=name, args_json_schema=args_json_schema)
        if json_schema is not None:
            schema = _given_schema(json_schema, required_name=schema["name"])
    elif kind == ToolKind.CLIENT:
        if json_schema is None:
            json_schema = {
                "name": name,
                "description": fields.get("description", ""),
                "parameters": args_json_schema or {"type": "object", "properties": {}, "required": []},
            }
        schema = _given_schema(json_schema, required_name=name)
        if args_json_schema is not None:
            schema["parameters"] = _checked_parameters(args_json_schema)
    elif kind == ToolKind.BUILTIN:
        raise ToolValidationError("Built-in tools are created by base_tools_upsert, not tool_create.")
    else:
        raise ToolValidationError(f"Unknown tool kind {kind!r}.")
    if "description" in fields:
        schema["description"] = fields["description"]
    fields["description"] = schema["description"]
    _check_common(tags=fields.get("tags"), return_char_limit=fields.get("return_char_limit"))

    if Tool.objects.for_org(organization).filter(name=schema["name"]).exists():
        raise ToolNameTaken(f"A tool named {schema['name']!r} already exists in this organization.")
    try:
        with transaction.atomic():
            return Tool.objects.create(
                organization=organization,
                name=schema["name"],
                json_schema=schema,
                args_json_schema=args_json_schema,
                kind=kind,
                source_code=source_code,
                created_by=created_by,
                **fields,
            )
    except IntegrityError as exc:
        raise ToolNameTaken(f"A tool named {schema['name']!r} already exists in this organization.") from exc


def tool_update(*, tool: Tool, **fields: Any) -> Tool:
    """Change a tool; new ``source_code`` re-derives its schema (and possibly its name).

    ``fields``: ``source_code``, ``json_schema``, ``args_json_schema``, ``name`` (client
    tools) and any of ``EDITABLE_FIELDS``; a built-in accepts ``BUILTIN_EDITABLE_FIELDS``.
    """
    allowed = (
        BUILTIN_EDITABLE_FIELDS
        if tool.kind == ToolKind.BUILTIN
        else EDITABLE_FIELDS | {"source_code", "json_schema", "args_json_schema", "name"}
    )
    _check_field_names(fields, allowed)
    _check_common(tags=fields.get("tags"), return_char_limit=fields.get("return_char_limit"))
    schema = dict(tool.json_schema)
    source_changed = "source_code" in fields
    parameters_changed = "args_json_schema" in fields
    if parameters_changed:
        tool.args_json_schema = fields.pop("args_json_schema")
    if source_changed:
        tool.source_code = fields.pop("source_code")
    if tool.kind == ToolKind.SOURCE and (source_changed or parameters_changed):
        derived = _source_schema(tool.source_code, function_name=None, args_json_schema=tool.args_json_schema)
        if not source_changed:
            derived["description"] = schema.get("description", derived["description"])
        schema = derived
    elif parameters_changed and tool.args_json_schema is not None:
        schema["parameters"] = _checked_parameters(tool.args_json_schema)
    if "json_schema" in fields:
        required_name = schema["name"] if tool.kind == ToolKind.SOURCE else None
        schema = _given_schema(fields.pop("json_schema"), required_name=required_name)
    if "name" in fields:
        name = fields.pop("name")
        if tool.kind == ToolKind.SOURCE and name != schema["name"]:
            raise InvalidToolSchema(f"A source tool is named after its function ({schema['name']!r}), not {name!r}.")
        schema["name"] = _checked_name(name)
    if "description" in fields:
        schema["description"] = fields.pop("description")

    for field_name, value in fields.items():
        setattr(tool, field_name, value)
    tool.json_schema = schema
    tool.description = schema.get("description", "")
    renamed = schema["name"] != tool.name
    tool.name = schema["name"]
    if renamed and Tool.objects.for_org(tool.organization_id).filter(name=tool.name).exclude(pk=tool.pk).exists():
        raise ToolNameTaken(f"A tool named {tool.name!r} already exists in this organization.")
    try:
        with transaction.atomic():
            tool.save()
    except IntegrityError as exc:
        raise ToolNameTaken(f"A tool named {tool.name!r} already exists in this organization.") from exc
    return tool


def tool_delete(*, tool: Tool) -> None:
    """Delete the tool; agents it was attached to lose it."""
    tool.delete()


def base_tools_upsert(*, organization: Organization, registry: BuiltinRegistry | None = None) -> list[Tool]:
    """Create or refresh the organization's built-in tools (Letta's ``POST /v1/tools/add-base-tools``).

    Returns them in registry order. A name the organization already uses for a tool of
    its own is left alone (and left out). ``default_requires_approval`` of an existing
    built-in is kept: it is the organization's choice.
    """
    registry = registry if registry is not None else base_registry()
    names = registry.names()
    now = timezone.now()
    with transaction.atomic():
        existing = {
            tool.name: tool for tool in Tool.objects.for_org(organization).select_for_update().filter(name__in=names)
        }
        to_create: list[Tool] = []
        to_update: list[Tool] = []
        for builtin in registry:
            tool = existing.get(builtin.name)
            if tool is None:
                to_create.append(Tool(organization=organization, **_builtin_fields(builtin)))
            elif tool.kind == ToolKind.BUILTIN:
                for field_name, value in _builtin_fields(builtin).items():
                    setattr(tool, field_name, value)
                tool.updated_at = now
                to_update.append(tool)
        Tool.objects.bulk_create(to_create, ignore_conflicts=True)
        Tool.objects.bulk_update(to_update, fields=[*_BUILTIN_FIELD_NAMES, "updated_at"])
    tools = {tool.name: tool for tool in Tool.objects.for_org(organization).filter(kind=ToolKind.BUILTIN)}
    return [tools[name] for name in names if name in tools]


def builtin_tools_named(*, organization: Organization, names: Iterable[str]) -> list[Tool]:
    """The organization's rows for the built-ins among ``names`` (other names are skipped), made or refreshed.

    Letta creates every built-in for every organization at startup, so a client may name one
    (``tools: ["web_search"]``) without calling ``add-base-tools`` first; here the rows are made
    when first named. Returned in the order of ``names``.
    """
    registry = base_registry()
    wanted = [builtin for name in dict.fromkeys(names) if (builtin := registry.get(name)) is not None]
    if not wanted:
        return []
    tools = {tool.name: tool for tool in base_tools_upsert(organization=organization, registry=BuiltinRegistry(wanted))}
    return [tools[builtin.name] for builtin in wanted if builtin.name in tools]


APPROVED_DEMO_TOOLS = frozenset({"get_secret_code"})


def demo_tools_upsert(*, organization: Organization, replacing_sources: Iterable[str] = ()) -> list[Tool]:
    """The organization's ``roll_dice`` and ``get_secret_code`` built-ins, made or refreshed.

    A source tool of the organization whose code is one of ``replacing_sources`` (an earlier
    seed's copy of a demo tool) becomes the built-in, keeping its id and attachments; any other
    tool of those names is the organization's own and is left alone (and left out). A new
    ``get_secret_code`` asks for approval.
    """
    names = [tool.name for tool in DEMO_TOOLS]
    with transaction.atomic():
        Tool.objects.for_org(organization).filter(
            name__in=names, kind=ToolKind.SOURCE, source_code__in=list(replacing_sources)
        ).update(kind=ToolKind.BUILTIN)
        before = set(Tool.objects.for_org(organization).filter(name__in=names).values_list("name", flat=True))
        tools = base_tools_upsert(organization=organization, registry=BuiltinRegistry(DEMO_TOOLS))
        fresh = [tool.pk for tool in tools if tool.name in APPROVED_DEMO_TOOLS and tool.name not in before]
        Tool.objects.filter(pk__in=fresh).update(default_requires_approval=True)
    fetched = {tool.name: tool for tool in Tool.objects.for_org(organization).filter(pk__in=[t.pk for t in tools])}
    return [fetched[name] for name in names if name in fetched]


def _builtin_fields(builtin: BuiltinTool) -> dict[str, Any]:
    return {
        "name": builtin.name,
        "kind": ToolKind.BUILTIN,
        "tool_type": builtin.tool_type,
        "description": builtin.description,
        "json_schema": builtin.json_schema,
        "source_code": "",
        "source_type": "python",
        "tags": [builtin.tool_type, *builtin.tags],
        "enable_parallel_execution": builtin.enable_parallel_execution,
        "metadata": {"available": builtin.available},
    }


_BUILTIN_FIELD_NAMES = (
    "name",
    "kind",
    "tool_type",
    "description",
    "json_schema",
    "source_code",
    "source_type",
    "tags",
    "enable_parallel_execution",
    "metadata",
)


def _locked(organization: Organization, name: str) -> Tool | None:
    return Tool.objects.for_org(organization).select_for_update().filter(name=name).first()


def _source_schema(
    source_code: str, *, function_name: str | None, args_json_schema: dict[str, Any] | None
) -> dict[str, Any]:
    schema = derive_tool_schema(source_code, function_name=function_name)
    if args_json_schema is not None:
        schema["parameters"] = _checked_parameters(args_json_schema)
    return schema


def _given_schema(json_schema: Any, *, required_name: str | None) -> dict[str, Any]:
    if not isinstance(json_schema, dict):
        raise InvalidToolSchema("json_schema must be an object with name, description and parameters.")
    name = json_schema.get("name") or required_name
    if required_name is not None and name != required_name:
        raise InvalidToolSchema(f"json_schema is named {name!r} but the tool is {required_name!r}.")
    return {
        "name": _checked_name(name),
        "description": str(json_schema.get("description") or ""),
        "parameters": _checked_parameters(json_schema.get("parameters") or {"type": "object", "properties": {}}),
    }


def _checked_name(name: Any) -> str:
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise InvalidToolSchema(
            f"Invalid tool name {name!r}: use 1 to 64 ASCII letters, digits, '_' or '-' (model providers require it)."
        )
    return name


def _checked_parameters(parameters: Any) -> dict[str, Any]:
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise InvalidToolSchema('The parameters must be a JSON schema of "type": "object".')
    try:
        check_parameter_schema(parameters)
    except SchemaError as exc:
        raise InvalidToolSchema(f"The parameters are not a valid JSON schema: {exc.message}") from exc
    except UnsupportedPattern as exc:
        raise InvalidToolSchema(f"The parameters cannot be checked in linear time: {exc}") from exc
    return parameters


def _check_common(*, tags: Any, return_char_limit: Any) -> None:
    if tags is not None and (not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags)):
        raise ToolValidationError("tags must be a list of strings.")
    if return_char_limit is not None and (
        not isinstance(return_char_limit, int) or isinstance(return_char_limit, bool) or return_char_limit < 1
    ):
        raise ToolValidationError("return_char_limit must be a positive integer.")


def _check_field_names(fields: dict[str, Any], allowed: frozenset[str] | set[str]) -> None:
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise TypeError(f"Unexpected tool fields: {', '.join(unknown)}")
