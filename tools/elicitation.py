"""A tool's question to the person (an MCP server's elicitation, form mode), as an approval asks it.

The call waits like a gated call: its stored tool call carries ``elicitation`` (``request``:
the server, its message and its requested schema). A person answers as they answer an
approval: ``approve: true`` with the answer as a JSON object in ``reason`` (checked against
the schema here, ``answer_content``), or ``approve: false`` to decline (``reason`` ``"cancel"``
cancels). The call then runs again, and the answer goes to the server (``reply_for``).

The form a page shows is decided here (``form_fields``): one field per property of the schema,
each a string, number, integer, boolean or enum; the page renders them and decides nothing.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from tools.base import ElicitationReply
from tools.validation import ArgumentError, validate_arguments

FieldKind = Literal["string", "number", "integer", "boolean", "enum"]
PRIMITIVES = frozenset({"string", "number", "integer", "boolean"})
CANCEL = "cancel"
"""The ``reason`` of a denial that cancels the question rather than declining it."""
MAX_FIELDS = 30
MAX_ROUNDS = 3
"""How many questions one call may ask the person, one after the other, before it is a tool error."""


def request(server: str, message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
    """What a call that waits for an answer stores with itself (``StoredToolCall.elicitation``): the form's
    fields are decided now, in the order the server gave them (a stored schema keeps no key order)."""
    return {
        "server": server,
        "message": message,
        "requested_schema": requested_schema,
        "fields": form_fields(requested_schema),
    }


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a form this server shows (flat, primitive fields only), or ``None``."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "the requested schema is not an object"
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        return "the requested schema's properties are not an object"
    if len(properties) > MAX_FIELDS:
        return f"the requested schema has more than {MAX_FIELDS} fields"
    for name, prop in properties.items():
        if _kind(prop) is None:
            return f"the field {name!r} is not a string, number, integer, boolean or enum"
    return None


def _kind(prop: Any) -> FieldKind | None:
    if not isinstance(prop, dict):
        return None
    if isinstance(prop.get("enum"), list) and all(isinstance(v, str) for v in prop["enum"]):
        return "enum"
    if isinstance(prop.get("oneOf"), list) and all(isinstance(o, dict) and "const" in o for o in prop["oneOf"]):
        return "enum"
    kind = prop.get("type")
    return kind if kind in PRIMITIVES else None


def _options(prop: dict[str, Any]) -> list[dict[str, str]]:
    if isinstance(prop.get("oneOf"), list):
        return [{"value": str(o["const"]), "label": str(o.get("title") or o["const"])} for o in prop["oneOf"]]
    names = prop.get("enumNames")
    labels = names if isinstance(names, list) and len(names) == len(prop["enum"]) else prop["enum"]
    return [{"value": value, "label": str(label)} for value, label in zip(prop["enum"], labels, strict=True)]


def form_fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The form's fields, in the schema's order: ``name``, ``label``, ``kind``, ``required``,
    ``description``, ``default`` and, for an enum, its ``options`` (``value`` and ``label``)."""
    required = set(schema.get("required") or [])
    fields: list[dict[str, Any]] = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = _kind(prop)
        if kind is None:
            continue
        field: dict[str, Any] = {
            "name": name,
            "label": str(prop.get("title") or name),
            "kind": kind,
            "required": name in required,
            "description": str(prop.get("description") or ""),
            "default": prop.get("default"),
        }
        if kind == "enum":
            field["options"] = _options(prop)
        fields.append(field)
    return fields


def answer_content(elicitation: dict[str, Any], reason: str | None) -> dict[str, Any]:
    """The answer in ``reason`` (a JSON object) checked against the requested schema and coerced losslessly;
    raises ``ValueError`` with a message that names the field."""
    try:
        parsed = json.loads(reason or "{}")
    except ValueError as exc:
        raise ValueError("The answer (in 'reason') must be a JSON object of the requested fields.") from exc
    if not isinstance(parsed, dict):
        raise ValueError("The answer (in 'reason') must be a JSON object of the requested fields.")
    schema = dict(elicitation.get("requested_schema") or {})
    schema.setdefault("type", "object")
    try:
        return validate_arguments("the answer", schema, json.dumps(parsed))
    except ArgumentError as exc:
        raise ValueError(str(exc).replace("arguments for tool 'the answer'", "answer")) from exc


def reply_for(elicitation: dict[str, Any], *, approve: bool, reason: str | None) -> ElicitationReply:
    """The reply a re-run of the call gives the server: accept with the (checked) answer, decline or cancel."""
    message = str(elicitation.get("message") or "")
    schema = dict(elicitation.get("requested_schema") or {})
    if approve:
        return ElicitationReply(message, schema, "accept", answer_content(elicitation, reason))
    return ElicitationReply(message, schema, "cancel" if (reason or "").strip() == CANCEL else "decline")


def replies_for(elicitation: dict[str, Any], *, approve: bool, reason: str | None) -> tuple[ElicitationReply, ...]:
    """Every answer the call's next run gives the server: those of its earlier questions, then this one's."""
    earlier = tuple(ElicitationReply(**answered) for answered in elicitation.get("answered") or [])
    return (*earlier, reply_for(elicitation, approve=approve, reason=reason))


def asked_again(
    elicitation: dict[str, Any] | None, request: dict[str, Any], reply: ElicitationReply | None
) -> dict[str, Any]:
    """The question a call asks after ``elicitation`` (its previous question, answered with ``reply``): ``request``
    with the answers so far, which its next run gives the server again, and its ``round``."""
    answered = list((elicitation or {}).get("answered") or [])
    if elicitation is not None and reply is not None:
        answered.append(
            {
                "message": reply.message,
                "requested_schema": reply.requested_schema,
                "action": reply.action,
                "content": reply.content,
            }
        )
    return {**request, "answered": answered, "round": len(answered) + 1}
