"""Letta's core memory tools through the real tool runner, on the calling agent's blocks."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync

from agents import services
from agents.memory import services as memory_services
from agents.models import Agent, Block
from tests.factories import AgentFactory, OrganizationFactory
from tests.memory.tool_calls import call
from tests.tools.helpers import FAST_LIMITS
from tools.base import ToolContext, ToolSpec
from tools.builtins import default_registry
from tools.runtime import DefaultToolRunner

pytestmark = pytest.mark.django_db(transaction=True)

EDITED = (
    "The core memory block with label `{}` has been edited. Review the changes and make sure they are as "
    "expected (correct indentation, no duplicate lines, etc). Edit the memory block again if necessary."
)


@pytest.fixture
def agent() -> Agent:
    return AgentFactory(
        name="editor",
        memory_blocks=[
            {"label": "human", "value": "Name: Alice\nLikes: tea", "limit": 60},
            {"label": "persona", "value": "Calm.", "read_only": True},
        ],
    )


def value(agent: Agent, label: str) -> str:
    return Block.objects.get(agent_blocks__agent=agent, label=label).value


def test_memory_insert_appends_by_default_and_inserts_at_a_line(agent: Agent) -> None:
    appended = call(agent, "memory_insert", label="human", new_str="City: Oxford")
    first = call(agent, "memory_insert", label="human", new_str="# About", insert_line=0)

    assert (appended.status, appended.tool_return) == ("success", EDITED.format("human"))
    assert first.status == "success"
    assert value(agent, "human") == "# About\nName: Alice\nLikes: tea\nCity: Oxford"


def test_memory_insert_refuses_a_line_outside_the_block(agent: Agent) -> None:
    outcome = call(agent, "memory_insert", label="human", new_str="x", insert_line=7)

    assert outcome.status == "error"
    assert outcome.tool_return == (
        "Invalid `insert_line` parameter: 7. It should be within the range of lines of the memory block: [0, 2], "
        "or -1 to append to the end of the memory block."
    )
    assert value(agent, "human") == "Name: Alice\nLikes: tea"


def test_memory_replace_replaces_text_that_occurs_exactly_once(agent: Agent) -> None:
    outcome = call(agent, "memory_replace", label="human", old_str="tea", new_str="coffee")

    assert outcome.tool_return == EDITED.format("human")
    assert value(agent, "human") == "Name: Alice\nLikes: coffee"


def test_memory_replace_says_when_the_text_is_missing_or_ambiguous(agent: Agent) -> None:
    missing = call(agent, "memory_replace", label="human", old_str="Bob", new_str="Carol")
    memory_services.block_update(block=Block.objects.get(label="human"), value="a\na")
    ambiguous = call(agent, "memory_replace", label="human", old_str="a", new_str="b")

    assert missing.tool_return == (
        "No replacement was performed, old_str `Bob` did not appear verbatim in memory block with label `human`."
    )
    assert ambiguous.tool_return == (
        "No replacement was performed. Multiple occurrences of old_str `a` in lines [1, 2]. Please ensure it is unique."
    )
    assert value(agent, "human") == "a\na"


def test_memory_replace_refuses_line_number_prefixes(agent: Agent) -> None:
    outcome = call(agent, "memory_replace", label="human", old_str="1→ Name: Alice", new_str="Name: Al")

    assert outcome.status == "error"
    assert outcome.tool_return.startswith("old_str contains a line number prefix, which is not allowed.")


def test_a_read_only_block_is_refused_and_unchanged(agent: Agent) -> None:
    outcomes = [
        call(agent, "memory_insert", label="persona", new_str="Loud."),
        call(agent, "memory_replace", label="persona", old_str="Calm.", new_str="Loud."),
        call(agent, "memory_rethink", label="persona", new_memory="Loud."),
        call(agent, "core_memory_append", label="persona", content="Loud."),
        call(agent, "core_memory_replace", label="persona", old_content="Calm.", new_content="Loud."),
    ]

    assert {(o.status, o.tool_return) for o in outcomes} == {
        ("error", "Error This block is read-only and cannot be edited.")
    }
    assert value(agent, "persona") == "Calm."


def test_an_edit_past_the_limit_is_refused_naming_the_limit_and_the_block_is_unchanged(agent: Agent) -> None:
    outcome = call(agent, "core_memory_append", label="human", content="x" * 40)

    assert outcome.status == "error"
    assert outcome.tool_return == "Edit failed: Exceeds 60 character limit (requested 63)"
    assert json.loads(outcome.func_response)["status"] == "Failed"
    assert value(agent, "human") == "Name: Alice\nLikes: tea"


def test_an_unknown_label_names_the_available_ones(agent: Agent) -> None:
    outcome = call(agent, "memory_replace", label="nope", old_str="a", new_str="b")

    assert outcome.tool_return == "Block field nope does not exist (available sections = human, persona)"


def test_memory_rethink_rewrites_a_block_and_creates_a_missing_one(agent: Agent) -> None:
    call(agent, "memory_rethink", label="human", new_memory="Name: Alice Liddell")
    created = call(agent, "memory_rethink", label="plans", new_memory="Visit Wonderland.")

    assert value(agent, "human") == "Name: Alice Liddell"
    assert created.status == "success"
    assert value(agent, "plans") == "Visit Wonderland."


def test_memory_finish_edits_does_nothing(agent: Agent) -> None:
    assert call(agent, "memory_finish_edits").tool_return == "None"


def test_core_memory_append_and_replace_edit_the_block_like_letta(agent: Agent) -> None:
    appended = call(agent, "core_memory_append", label="human", content="Pet: cat")
    replaced = call(agent, "core_memory_replace", label="human", old_content="cat", new_content="dog")
    missing = call(agent, "core_memory_replace", label="human", old_content="parrot", new_content="owl")

    assert (appended.tool_return, replaced.tool_return) == ("None", "None")
    assert value(agent, "human") == "Name: Alice\nLikes: tea\nPet: dog"
    assert missing.tool_return == "Old content 'parrot' not found in memory block 'human'"


def test_two_agents_sharing_a_block_see_each_others_edits(agent: Agent) -> None:
    shared = memory_services.block_create(organization=agent.organization, label="team", value="Standup at 9.")
    memory_services.agent_attach_block(agent=agent, block=shared)
    other = services.agent_create(organization=agent.organization, name="other", block_ids=[shared.public_id])

    call(agent, "memory_insert", label="team", new_str="Retro on Friday.")
    call(other, "memory_replace", label="team", old_str="9", new_str="10")

    assert value(agent, "team") == value(other, "team") == "Standup at 10.\nRetro on Friday."


def test_a_tool_never_reaches_a_block_of_another_organization(agent: Agent) -> None:
    stranger = services.agent_create(organization=OrganizationFactory(), name="stranger", memory_blocks=[])
    context = ToolContext(organization_id=stranger.organization_id, agent_id=agent.id)
    builtin = default_registry().get("memory_rethink")
    spec = ToolSpec(name="memory_rethink", kind="builtin", json_schema=builtin.json_schema)

    outcome = async_to_sync(DefaultToolRunner(limits=FAST_LIMITS).run)(
        spec, json.dumps({"label": "human", "new_memory": "pwned"}), context
    )

    assert outcome.status == "error"
    assert value(agent, "human") == "Name: Alice\nLikes: tea"


def test_the_memory_tool_creates_edits_renames_and_deletes_blocks(agent: Agent) -> None:
    created = call(agent, "memory", command="create", path="/memories/notes", description="Notes.", file_text="a")
    inserted = call(agent, "memory", command="insert", path="/memories/notes", insert_text="b")
    replaced = call(agent, "memory", command="str_replace", path="/memories/notes", old_str="a", new_str="z")
    renamed = call(agent, "memory", command="rename", old_path="/memories/notes", new_path="/memories/journal")
    described = call(agent, "memory", command="rename", path="/memories/journal", description="My journal.")

    assert [o.status for o in (created, inserted, replaced, renamed, described)] == ["success"] * 5
    journal = Block.objects.get(agent_blocks__agent=agent, label="journal")
    assert (journal.value, journal.description) == ("z\nb", "My journal.")

    deleted = call(agent, "memory", command="delete", path="/memories/journal")

    assert deleted.tool_return == "Deleted the memory block 'journal'."
    assert not Block.objects.filter(label="journal").exists()


def test_the_memory_tool_respects_read_only_blocks_and_existing_labels(agent: Agent) -> None:
    deleted = call(agent, "memory", command="delete", path="/memories/persona")
    duplicate = call(agent, "memory", command="create", path="/memories/human")
    unknown = call(agent, "memory", command="fly", path="/memories/human")

    assert deleted.tool_return == "Error This block is read-only and cannot be edited."
    assert duplicate.tool_return == "A memory block with label 'human' already exists."
    assert unknown.status == "error"
    assert value(agent, "persona") == "Calm."


def test_a_builtin_that_only_answers_not_available_cannot_be_attached() -> None:
    from agents.errors import InvalidArgument
    from tools.services import base_tools_upsert

    organization = OrganizationFactory()
    files = next(tool for tool in base_tools_upsert(organization=organization) if tool.name == "store_memories")
    agent = services.agent_create(organization=organization, name="a")

    with pytest.raises(InvalidArgument, match="store_memories is not available on this server"):
        services.agent_attach_tool(agent=agent, tool=files)
    with pytest.raises(InvalidArgument):
        services.agent_create(organization=organization, name="b", tool_ids=[files.public_id])
    assert not agent.agent_tools.exists()


def test_every_builtin_offered_by_default_works() -> None:
    registry = default_registry()
    for agent_type, names in services.BASE_TOOLS.items():
        agent = services.agent_create(
            organization=OrganizationFactory(), name=agent_type, agent_type=agent_type, include_base_tools=True
        )
        assert sorted(agent.agent_tools.values_list("tool__name", flat=True)) == sorted(names)
        assert all(registry.get(name).available for name in names)
