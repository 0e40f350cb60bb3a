"""The demo model's memory tool calls name real blocks: its suggestions and its calls work on a new agent."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from agents.chat.views import demo_suggestions
from agents.engine.events import MessageEvent, RunFinishedEvent
from agents.engine.inputs import UserInput
from agents.llm.base import ToolSchema
from agents.llm.intents import example_call, memory_blocks_in
from agents.memory.prompt import BlockView, compile_blocks
from agents.models import Agent, Block, Run
from agents.runs.turns import TurnSetup, open_turn
from tests.factories import AgentFactory
from tools.builtins import default_registry


async def tool_results(agent: Agent, text: str) -> list[dict]:
    run = await Run.objects.acreate(organization_id=agent.organization_id, agent=agent)
    opened = await open_turn(TurnSetup(run=run, turn_input=[UserInput(text)]))
    events = [event async for event in opened.events()]
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].stop_reason == "end_turn"
    return [r for e in events if isinstance(e, MessageEvent) for r in e.message.tool_returns]


@pytest.fixture
def agent(transactional_db: None) -> Agent:
    return AgentFactory(name="demo", include_base_tools=True)


@pytest.mark.django_db(transaction=True)
async def test_every_suggested_call_of_a_new_demo_agent_succeeds(agent: Agent) -> None:
    suggestions = await sync_to_async(demo_suggestions)(agent)
    memory_calls = [text for text in suggestions if "memory_" in text and " and call " not in text]

    assert {text.split()[1] for text in memory_calls} == {"memory_insert", "memory_replace"}
    assert all("label='human'" in text for text in memory_calls)
    for text in memory_calls:
        [result] = await tool_results(agent, text)
        assert result["status"] == "success", (text, result["tool_return"])


@pytest.mark.django_db(transaction=True)
async def test_a_memory_call_without_a_label_edits_the_first_block_of_the_prompt(agent: Agent) -> None:
    [result] = await tool_results(agent, "call memory_insert with new_str='Likes green tea.'")

    human = await Block.objects.aget(agent_blocks__agent=agent, label="human")
    assert result["status"] == "success", result["tool_return"]
    assert human.value.endswith("Likes green tea.")


@pytest.mark.parametrize("line_numbers", [False, True])
def test_the_demo_reads_the_blocks_of_its_prompt_and_its_examples_name_them(line_numbers: bool) -> None:
    blocks = [BlockView("human", "Name: Alice\nLikes: tea"), BlockView("persona", "Calm. Kind.")]
    system = f"You are kind.\n{compile_blocks(blocks, line_numbers=line_numbers)}\nBe brief."
    replace = next(tool for tool in default_registry() if tool.name == "memory_replace")
    schema = ToolSchema(name=replace.name, description="", parameters=replace.parameters)

    seen = memory_blocks_in(system)

    assert seen == {"human": "Name: Alice\nLikes: tea", "persona": "Calm. Kind."}
    assert example_call(schema, seen) == (
        "call memory_replace with label='human' and old_str='Name: Alice' and new_str='hello world'"
    )
