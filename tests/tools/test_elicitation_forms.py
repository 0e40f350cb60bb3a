"""The form a tool's question is shown as, and the answers it accepts (``tools.elicitation``)."""

from __future__ import annotations

import pytest

from tools import elicitation

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "As on the badge"},
        "count": {"type": "integer", "default": 2},
        "ratio": {"type": "number"},
        "urgent": {"type": "boolean", "default": False},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g"}]},
    },
    "required": ["name", "size"],
}


def test_each_property_is_a_field_of_its_kind_in_the_schemas_order() -> None:
    fields = elicitation.form_fields(SCHEMA)

    assert [(f["name"], f["kind"], f["required"]) for f in fields] == [
        ("name", "string", True),
        ("count", "integer", False),
        ("ratio", "number", False),
        ("urgent", "boolean", False),
        ("size", "enum", True),
        ("colour", "enum", False),
    ]
    assert (fields[0]["label"], fields[0]["description"], fields[1]["default"]) == ("Your name", "As on the badge", 2)
    assert fields[4]["options"] == [{"value": "s", "label": "Small"}, {"value": "m", "label": "Medium"}]
    assert fields[5]["options"] == [{"value": "r", "label": "Red"}, {"value": "g", "label": "g"}]


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (SCHEMA, None),
        ({"type": "object", "properties": {"tags": {"type": "array"}}}, "the field 'tags' is not a string"),
        ({"type": "object", "properties": {"at": {"type": "object"}}}, "the field 'at' is not a string"),
        ({"type": "array"}, "the requested schema is not an object"),
    ],
)
def test_only_flat_primitive_schemas_are_shown_as_forms(schema: dict[str, object], problem: str | None) -> None:
    found = elicitation.schema_problem(schema)

    assert found == problem if problem is None else (found or "").startswith(problem)


def test_an_answer_is_checked_against_the_schema_and_names_what_is_wrong() -> None:
    asked = elicitation.request("files", "Who?", SCHEMA)

    assert elicitation.answer_content(asked, '{"name": "Ada", "size": "m", "count": 3}') == {
        "name": "Ada",
        "size": "m",
        "count": 3,
    }
    for reason, named in [('{"name": "Ada"}', "size"), ('{"name": "Ada", "size": "xl"}', "size"), ("[1]", "JSON")]:
        with pytest.raises(ValueError, match=named):
            elicitation.answer_content(asked, reason)


def test_a_denial_declines_and_a_denial_saying_cancel_cancels() -> None:
    asked = elicitation.request("files", "Who?", SCHEMA)

    assert elicitation.reply_for(asked, approve=False, reason="no").action == "decline"
    assert elicitation.reply_for(asked, approve=False, reason=None).action == "decline"
    assert elicitation.reply_for(asked, approve=False, reason="cancel").action == "cancel"
    accepted = elicitation.reply_for(asked, approve=True, reason='{"name": "Ada", "size": "s"}')
    assert (accepted.action, accepted.content, accepted.message) == ("accept", {"name": "Ada", "size": "s"}, "Who?")
