"""tool_create: source and client-side tools, unique names per organization."""

from __future__ import annotations

import pytest

from tests.tools.test_schema import ROLL_DICE_SOURCE
from tools.models import Tool, ToolKind
from tools.services import InvalidToolSchema, ToolNameTaken, ToolValidationError, tool_create

pytestmark = pytest.mark.django_db

PICK_COLOR = {
    "name": "pick_color",
    "description": "Ask the user to pick a color in the app.",
    "parameters": {"type": "object", "properties": {"palette": {"type": "string"}}, "required": ["palette"]},
}


def test_it_creates_a_source_tool_from_its_function(cast):
    tool = tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE, created_by=cast.bob, tags=["dice"])
    stored = Tool.objects.get(pk=tool.pk)
    assert (stored.name, stored.kind, stored.tags, stored.created_by) == (
        "roll_dice_tool",
        "source",
        ["dice"],
        cast.bob,
    )
    assert stored.json_schema["parameters"]["required"] == ["num_sides"]


def test_a_name_already_used_in_the_organization_is_refused(cast):
    tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    with pytest.raises(ToolNameTaken, match="A tool named 'roll_dice_tool' already exists in this organization"):
        tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    assert Tool.objects.for_org(cast.org_a).count() == 1


def test_the_name_is_free_in_another_organization(cast):
    tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    tool_create(organization=cast.org_b, source_code=ROLL_DICE_SOURCE)
    assert Tool.objects.filter(name="roll_dice_tool").count() == 2


def test_it_creates_a_client_side_tool_from_a_json_schema(cast):
    tool = tool_create(organization=cast.org_a, kind=ToolKind.CLIENT, json_schema=PICK_COLOR)
    stored = Tool.objects.get(pk=tool.pk)
    assert (stored.name, stored.kind, stored.source_code) == ("pick_color", "client", "")
    assert stored.json_schema == PICK_COLOR
    assert stored.description == PICK_COLOR["description"]


def test_a_client_side_tool_can_be_described_by_name_and_parameters(cast):
    tool = tool_create(
        organization=cast.org_a,
        kind=ToolKind.CLIENT,
        name="pick_color",
        description="Pick a color.",
        args_json_schema=PICK_COLOR["parameters"],
    )
    assert tool.json_schema == {**PICK_COLOR, "description": "Pick a color."}


def test_a_tool_name_providers_refuse_is_refused(cast):
    with pytest.raises(InvalidToolSchema, match="Invalid tool name 'pick color'"):
        tool_create(organization=cast.org_a, kind=ToolKind.CLIENT, json_schema={**PICK_COLOR, "name": "pick color"})


def test_built_in_tools_are_not_created_one_by_one(cast):
    with pytest.raises(ToolValidationError, match="base_tools_upsert"):
        tool_create(organization=cast.org_a, kind=ToolKind.BUILTIN, json_schema=PICK_COLOR)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"return_char_limit": 0}, "return_char_limit must be a positive integer"),
        ({"tags": "dice"}, "tags must be a list of strings"),
    ],
)
def test_invalid_fields_are_refused(cast, fields, message):
    with pytest.raises(ToolValidationError, match=message):
        tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE, **fields)
    assert not Tool.objects.for_org(cast.org_a).exists()


def test_an_unknown_field_is_a_programming_error(cast):
    with pytest.raises(TypeError, match="Unexpected tool fields: colour"):
        tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE, colour="red")
