"""The memory section reaches the model: asserted on the requests the fake model server received.

``agents.runs.turns.model_settings`` sets ``ModelSettings.memory`` and the loop builds each step's
request with ``build_step_request``, so the section is compiled from the rows at every step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agents.engine.events import RunFinishedEvent
from agents.engine.inputs import UserInput
from agents.models import Agent, Run
from agents.runs.turns import TurnSetup, open_turn
from tests.factories import AgentFactory
from tests.fake_llm.script import Reply
from tests.support.api import api_client

pytestmark = pytest.mark.django_db(transaction=True)

HANDLES = ["anthropic/claude-sonnet-4-5-20250929", "openai/gpt-4.1-mini"]


def system_of(body: dict[str, Any]) -> str:
    """The system prompt of a recorded Anthropic or OpenAI request body."""
    if "system" in body:
        system = body["system"]
        return system if isinstance(system, str) else "".join(part.get("text", "") for part in system)
    first = body["messages"][0]
    assert first["role"] in ("system", "developer")
    content = first["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


@pytest.fixture(params=HANDLES, ids=lambda handle: handle.split("/")[0])
def agent(request, settings, fake_llm) -> Agent:
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.OPENAI_BASE_URL = fake_llm.base_url_openai
    settings.OPENAI_API_KEY = "sk-test"
    agent = AgentFactory(
        name="rememberer",
        model=request.param,
        system="You are Rememberer.\n{CORE_MEMORY}\nBe brief.",
        include_base_tools=True,
        memory_blocks=[{"label": "human", "value": "Name: Alice"}, {"label": "persona", "value": "Curious."}],
    )
    return agent


async def turn(agent: Agent, text: str) -> RunFinishedEvent:
    run = await Run.objects.acreate(organization_id=agent.organization_id, agent=agent)
    opened = await open_turn(TurnSetup(run=run, turn_input=[UserInput(text)]))
    events = [event async for event in opened.events()]
    assert isinstance(events[-1], RunFinishedEvent)
    return events[-1]


async def test_the_model_sees_the_blocks_in_place_of_the_placeholder(agent: Agent, fake_llm) -> None:
    fake_llm.script(Reply(text="Hello Alice."))

    assert (await turn(agent, "hi")).stop_reason == "end_turn"

    system = system_of(fake_llm.last_request.body)
    assert system.startswith("You are Rememberer.\n<memory_blocks>\n")
    assert "Name: Alice" in system and "Curious." in system
    assert "</memory_metadata>\nBe brief." in system


async def test_an_edit_through_the_api_is_in_the_next_turns_request_and_nothing_else_changes(
    agent: Agent, fake_llm
) -> None:
    fake_llm.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    await turn(agent, "first")
    first = system_of(fake_llm.last_request.body)
    await turn(agent, "second")
    unchanged = system_of(fake_llm.last_request.body)

    client = await sync_to_async(api_client)(agent.organization)
    response = await sync_to_async(client.patch)(
        f"/v1/agents/{agent.public_id}/core-memory/blocks/human", {"value": "Name: Alice Liddell"}, format="json"
    )
    assert response.status_code == 200
    await turn(agent, "third")
    edited = system_of(fake_llm.last_request.body)

    assert unchanged == first
    assert "Name: Alice Liddell" in edited
    assert edited != first


async def test_a_memory_tool_edit_in_step_one_is_in_the_prompt_of_step_two(agent: Agent, fake_llm) -> None:
    fake_llm.script(
        Reply(tool_calls=[("memory_insert", {"label": "human", "new_str": "Likes green tea."})]),
        Reply(text="Noted."),
    )

    finished = await turn(agent, "I like green tea")

    assert finished.stop_reason == "end_turn"
    requests = fake_llm.requests
    assert "Likes green tea." not in system_of(requests[-2].body)
    assert "Name: Alice\nLikes green tea." in system_of(requests[-1].body).replace("1→ ", "").replace("2→ ", "")
    tool_names = json.dumps(requests[-1].body.get("tools"))
    assert "memory_insert" in tool_names and "memory_replace" in tool_names and "conversation_search" in tool_names
