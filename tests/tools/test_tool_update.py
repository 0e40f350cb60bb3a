"""tool_update: new source re-derives the schema; names stay unique; built-ins keep their code."""

from __future__ import annotations

import pytest

from tests.tools.test_schema import GET_SECRET_CODE_SOURCE, ROLL_DICE_SOURCE
from tools.models import Tool, ToolKind
from tools.services import InvalidToolSchema, ToolNameTaken, base_tools_upsert, tool_create, tool_delete, tool_update

pytestmark = pytest.mark.django_db


def test_new_source_re_derives_the_schema_and_the_name(cast):
    tool = tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    new_source = (
        'def flip_coin(times: int = 1) -> str:\n    """Flip a coin.\n\n    Args:\n        times: How often.\n    """\n'
    )
    tool_update(tool=tool, source_code=new_source)
    stored = Tool.objects.get(pk=tool.pk)
    assert stored.name == "flip_coin"
    assert stored.description == "Flip a coin."
    assert stored.json_schema["parameters"] == {
        "type": "object",
        "properties": {"times": {"type": "integer", "description": "How often."}},
        "required": [],
    }


def test_renaming_onto_another_tool_is_refused_and_changes_nothing(cast):
    tool_create(organization=cast.org_a, source_code=GET_SECRET_CODE_SOURCE)
    tool = tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    with pytest.raises(ToolNameTaken, match="'get_secret_code_tool' already exists"):
        tool_update(tool=tool, source_code=GET_SECRET_CODE_SOURCE)
    assert Tool.objects.get(pk=tool.pk).source_code == ROLL_DICE_SOURCE


def test_a_new_description_reaches_the_schema_the_model_sees(cast):
    tool = tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    tool_update(tool=tool, description="Roll one die.", default_requires_approval=True)
    stored = Tool.objects.get(pk=tool.pk)
    assert stored.description == stored.json_schema["description"] == "Roll one die."
    assert stored.default_requires_approval is True


def test_given_parameters_replace_and_then_restore_the_derived_ones(cast):
    tool = tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE, description="Kept.")
    given = {"type": "object", "properties": {"num_sides": {"type": "integer", "enum": [6, 20]}}, "required": []}
    tool_update(tool=tool, args_json_schema=given)
    assert Tool.objects.get(pk=tool.pk).json_schema["parameters"] == given
    tool_update(tool=tool, args_json_schema=None)
    stored = Tool.objects.get(pk=tool.pk)
    assert stored.json_schema["parameters"]["required"] == ["num_sides"]
    assert stored.description == "Kept."


def test_a_source_tools_name_follows_its_function(cast):
    tool = tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    with pytest.raises(InvalidToolSchema, match="named after its function"):
        tool_update(tool=tool, name="dice")


def test_a_client_side_tool_can_be_renamed_and_given_a_new_schema(cast):
    tool = tool_create(organization=cast.org_a, kind=ToolKind.CLIENT, name="pick_color")
    schema = {"name": "choose_color", "description": "Choose.", "parameters": {"type": "object", "properties": {}}}
    tool_update(tool=tool, json_schema=schema)
    assert Tool.objects.get(pk=tool.pk).name == "choose_color"


def test_a_built_in_keeps_its_code_but_takes_the_organizations_settings(cast):
    tool = Tool.objects.get(pk=next(t.pk for t in base_tools_upsert(organization=cast.org_a) if t.name == "run_code"))
    tool_update(tool=tool, default_requires_approval=True, tags=["mine"])
    assert Tool.objects.get(pk=tool.pk).default_requires_approval is True
    with pytest.raises(TypeError, match="source_code"):
        tool_update(tool=tool, source_code=ROLL_DICE_SOURCE)


def test_tool_delete_removes_the_tool(cast):
    tool = tool_create(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    tool_delete(tool=tool)
    assert not Tool.objects.filter(pk=tool.pk).exists()
