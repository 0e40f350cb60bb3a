"""tool_upsert_from_source: what letta_client's upsert_from_function does to the tool table."""

from __future__ import annotations

import pytest

from tests.tools.test_schema import GET_SECRET_CODE_SOURCE, ROLL_DICE_SOURCE
from tools.models import Tool, ToolKind
from tools.schema import ToolSourceError, derive_tool_schema
from tools.services import InvalidToolSchema, ToolNameTaken, base_tools_upsert, tool_upsert_from_source

pytestmark = pytest.mark.django_db


def test_it_creates_the_seed_tool_with_lettas_schema_and_defaults(cast):
    tool = tool_upsert_from_source(
        organization=cast.org_a,
        source_code=GET_SECRET_CODE_SOURCE,
        created_by=cast.alice,
        default_requires_approval=True,
    )
    stored = Tool.objects.get(pk=tool.pk)
    assert stored.name == "get_secret_code_tool"
    assert stored.json_schema == derive_tool_schema(GET_SECRET_CODE_SOURCE)
    assert stored.description == stored.json_schema["description"]
    assert (stored.kind, stored.tool_type, stored.source_code) == (ToolKind.SOURCE, "custom", GET_SECRET_CODE_SOURCE)
    assert (stored.return_char_limit, stored.enable_parallel_execution, stored.metadata) == (50_000, False, {})
    assert stored.default_requires_approval is True
    assert stored.created_by == cast.alice
    assert stored.organization == cast.org_a


def test_a_new_tool_does_not_require_approval_unless_asked(cast):
    tool = tool_upsert_from_source(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    assert Tool.objects.get(pk=tool.pk).default_requires_approval is False


def test_uploading_the_same_function_again_updates_that_tool(cast):
    first = tool_upsert_from_source(
        organization=cast.org_a, source_code=ROLL_DICE_SOURCE, default_requires_approval=True
    )
    changed = ROLL_DICE_SOURCE.replace("A tool that returns a random number", "Roll a die: a random number")
    second = tool_upsert_from_source(organization=cast.org_a, source_code=changed, tags=["dice"])
    assert second.pk == first.pk
    stored = Tool.objects.for_org(cast.org_a).get(name="roll_dice_tool")
    assert stored.source_code == changed
    assert stored.description.startswith("Roll a die")
    assert stored.default_requires_approval is True  # None leaves it as it was
    assert stored.tags == ["dice"]
    assert Tool.objects.for_org(cast.org_a).count() == 1


def test_the_same_function_in_another_organization_is_another_tool(cast):
    mine = tool_upsert_from_source(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    theirs = tool_upsert_from_source(organization=cast.org_b, source_code=ROLL_DICE_SOURCE)
    assert mine.pk != theirs.pk
    assert Tool.objects.for_org(cast.org_a).get().pk == mine.pk
    assert Tool.objects.for_org(cast.org_b).get().pk == theirs.pk


def test_given_parameters_replace_the_derived_ones(cast):
    parameters = {"type": "object", "properties": {"num_sides": {"type": "integer", "minimum": 2}}, "required": []}
    tool = tool_upsert_from_source(organization=cast.org_a, source_code=ROLL_DICE_SOURCE, args_json_schema=parameters)
    stored = Tool.objects.get(pk=tool.pk)
    assert stored.json_schema["parameters"] == parameters
    assert stored.args_json_schema == parameters


def test_a_given_description_replaces_the_docstring(cast):
    tool = tool_upsert_from_source(organization=cast.org_a, source_code=ROLL_DICE_SOURCE, description="Roll it.")
    stored = Tool.objects.get(pk=tool.pk)
    assert stored.description == stored.json_schema["description"] == "Roll it."


def test_it_picks_the_named_function_when_the_source_has_several(cast):
    source = "def first(a: int) -> int:\n    return a\n\n\ndef second(b: str) -> str:\n    return b\n"
    assert tool_upsert_from_source(organization=cast.org_a, source_code=source, name="second").name == "second"


def test_bad_source_is_refused_with_its_line_and_nothing_is_saved(cast):
    with pytest.raises(ToolSourceError) as raised:
        tool_upsert_from_source(organization=cast.org_a, source_code="def roll(sides: int) -> str\n    return ''\n")
    assert raised.value.line == 1
    assert not Tool.objects.for_org(cast.org_a).exists()


def test_invalid_parameters_are_refused(cast):
    with pytest.raises(InvalidToolSchema, match='"type": "object"'):
        tool_upsert_from_source(
            organization=cast.org_a, source_code=ROLL_DICE_SOURCE, args_json_schema={"type": "array"}
        )
    assert not Tool.objects.for_org(cast.org_a).exists()


def test_it_does_not_overwrite_a_built_in_tool_of_that_name(cast):
    base_tools_upsert(organization=cast.org_a)
    source = "def send_message(message: str) -> str:\n    return message\n"
    with pytest.raises(ToolNameTaken, match="built-in server tool named 'send_message' already exists"):
        tool_upsert_from_source(organization=cast.org_a, source_code=source)
    assert Tool.objects.for_org(cast.org_a).get(name="send_message").kind == ToolKind.BUILTIN
