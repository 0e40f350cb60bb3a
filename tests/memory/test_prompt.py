"""The compiled memory section: Letta's format byte for byte, placement in the system prompt, freshness."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from asgiref.sync import async_to_sync

from agents import services
from agents.engine.context import ModelSettings, build_request, build_step_request
from agents.engine.store import MessageSnapshot
from agents.memory import services as memory_services
from agents.memory.archival import passage_insert
from agents.memory.prompt import BlockView, compile_memory, memory_for_agent, memory_source
from agents.models import Agent, Block, Message, MessageRole
from agents.runs.preview import agent_reset_messages
from tests.factories import AgentFactory, OrganizationFactory

EXPECTED = """\
<memory_blocks>
The following memory blocks are currently engaged in your core memory unit:

<human>
<description>
About the user.
</description>
<metadata>
- chars_current=11
- chars_limit=100
</metadata>
<value>
Name: Alice
</value>
</human>

<persona>
<description>
Who I am.
</description>
<metadata>
- read_only=true
- chars_current=14
- chars_limit=5000
</metadata>
<value>
Kind.
Precise.
</value>
</persona>

</memory_blocks>

<memory_metadata>
- AGENT_ID: agent-123
- Memory blocks were last modified: 2026-11-30 02:05:09 PM UTC+0000
- 4 previous messages between you and the user are stored in recall memory (use tools to access them)
- 2 total memories you created are stored in archival memory (use tools to access them)
</memory_metadata>"""

BLOCKS = [
    BlockView("human", "Name: Alice", "About the user.", 100),
    BlockView("persona", "Kind.\nPrecise.", "Who I am.", 5000, read_only=True),
]


def test_the_memory_section_is_lettas_format_byte_for_byte() -> None:
    compiled = compile_memory(
        BLOCKS,
        agent_id="agent-123",
        last_modified=datetime(2026, 11, 30, 14, 5, 9, tzinfo=UTC),
        recall_count=4,
        archival_count=2,
    )

    assert compiled == EXPECTED


def test_archival_memory_is_mentioned_only_when_it_holds_passages() -> None:
    compiled = compile_memory(BLOCKS, agent_id="agent-123", recall_count=0, archival_count=0)

    assert "archival memory" not in compiled
    assert "- 0 previous messages between you and the user" in compiled


def test_anthropic_models_see_numbered_lines_and_a_warning() -> None:
    compiled = compile_memory(BLOCKS, agent_id="agent-1", line_numbers=True)

    assert "<value>\n1→ Kind.\n2→ Precise.\n</value>" in compiled
    assert compiled.count("<warning>") == 2


def _system_row(text: str) -> MessageSnapshot:
    return MessageSnapshot(id=1, agent_id=1, seq=0, role="system", content=[{"type": "text", "text": text}])


def test_the_section_replaces_the_placeholder_or_follows_the_system_text_after_a_blank_line() -> None:
    settings = ModelSettings(handle="demo/echo-1", model="echo-1")

    placed = build_request([_system_row("Before\n{CORE_MEMORY}\nAfter")], [], settings, memory="MEM")
    appended = build_request([_system_row("Be nice.")], [], settings, memory="MEM")
    untouched = build_request([_system_row("Be nice. {CORE_MEMORY}")], [], settings)

    assert placed.system == "Before\nMEM\nAfter"
    assert appended.system == "Be nice.\n\nMEM"
    assert untouched.system == "Be nice. {CORE_MEMORY}"


@pytest.fixture
def agent(db: None) -> Agent:
    return AgentFactory(
        name="a",
        memory_blocks=[{"label": "human", "value": "Name: Alice"}, {"label": "persona", "value": "Kind."}],
    )


def test_the_section_is_built_from_the_rows_and_is_identical_while_memory_is_unchanged(
    agent: Agent, django_assert_num_queries
) -> None:
    # One: the counts, the blocks and whether any folder is attached (the folders section's own query
    # runs only then; issue 24). Three before (the folders section added one, issue 27).
    with django_assert_num_queries(1):
        first = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.id)
    second = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.id)

    assert first == second
    assert "<human>" in first and "Name: Alice" in first and f"- AGENT_ID: {agent.public_id}" in first
    assert "chars_limit=20000" in first


def test_an_edit_or_a_passage_changes_the_section(agent: Agent) -> None:
    before = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.id)
    human = Block.objects.get(agent_blocks__agent=agent, label="human")
    memory_services.block_update(block=human, value="Name: Alice Liddell")
    passage_insert(agent=agent, text="Alice likes tea.")

    after = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.id)

    assert before != after
    assert "Name: Alice Liddell" in after
    assert "- 1 total memories you created are stored in archival memory" in after


def test_another_organization_gets_nothing(agent: Agent) -> None:
    assert memory_for_agent(organization_id=OrganizationFactory().pk, agent_id=agent.id) == ""


@pytest.mark.django_db(transaction=True)
def test_each_step_request_reads_memory_afresh_through_the_engine_hook() -> None:
    agent = services.agent_create(
        organization=OrganizationFactory(), name="a", model="demo/echo-1", system="You remember.\n{CORE_MEMORY}"
    )
    settings = ModelSettings(handle=agent.model, model="echo-1", memory=memory_source(agent))
    rows = [_system_row(agent.system)]

    first = async_to_sync(build_step_request)(rows, [], settings)
    human = Block.objects.get(agent_blocks__agent=agent, label="human")
    memory_services.block_update(block=human, value="The user is called Zed.")
    second = async_to_sync(build_step_request)(rows, [], settings)

    assert first.system.startswith("You remember.\n<memory_blocks>")
    assert "Nothing is known about the user yet." in first.system
    assert "The user is called Zed." in second.system


def test_the_preview_shows_the_compiled_memory(agent: Agent) -> None:
    from agents.engine.inputs import UserInput
    from agents.engine.rules import ToolRules
    from agents.engine.state import preview_request
    from agents.models import Message

    rows = [m.snapshot() for m in Message.objects.in_context(agent)]
    settings = ModelSettings(handle=agent.model, model="echo-1", memory=memory_source(agent))

    request = preview_request(rows, [UserInput("hi")], [], settings, ToolRules.from_json([]))

    assert request.system.startswith(f"{agent.system}\n\n<memory_blocks>")
    assert "Name: Alice" in request.system


def test_the_rows_a_reset_took_out_of_the_window_are_counted_as_recall_memory(agent: Agent) -> None:
    before = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.id)
    taken_out = Message.objects.filter(agent=agent).exclude(role=MessageRole.SYSTEM).count()

    agent_reset_messages(agent=agent)

    after = memory_for_agent(organization_id=agent.organization_id, agent_id=agent.id)
    assert "- 0 previous messages between you and the user are stored in recall memory" in before
    assert taken_out > 0
    assert f"- {taken_out} previous messages between you and the user are stored in recall memory" in after
