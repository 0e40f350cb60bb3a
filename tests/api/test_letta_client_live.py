"""The official ``letta-client`` SDK against a live server: the setup and teardown calls of seed 000."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from letta_client import Letta
from letta_client.core.api_error import ApiError

from tests.seed_tools import approval_agent_fields, get_secret_code_tool, roll_dice_tool

if TYPE_CHECKING:
    from collections.abc import Iterator

    from letta_client import AgentState, Tool

    from tests.support.live_server import LiveServer


pytestmark = [pytest.mark.live_server, pytest.mark.sdk]


@pytest.fixture
def approval_tool(sdk_client: Letta) -> Iterator[Tool]:
    sdk_client.tools.upsert_base_tools()
    tool = sdk_client.tools.upsert_from_function(func=get_secret_code_tool, default_requires_approval=True)
    yield tool
    sdk_client.tools.delete(tool_id=tool.id)


@pytest.fixture
def dice_tool(sdk_client: Letta) -> Iterator[Tool]:
    sdk_client.tools.upsert_base_tools()
    tool = sdk_client.tools.upsert_from_function(func=roll_dice_tool)
    yield tool
    sdk_client.tools.delete(tool_id=tool.id)


@pytest.fixture
def agent(sdk_client: Letta, approval_tool: Tool, dice_tool: Tool) -> Iterator[AgentState]:
    """Seed 000's ``agent`` fixture, call for call."""
    agent_state = sdk_client.agents.create(**approval_agent_fields([approval_tool.id, dice_tool.id]))
    agent_state = sdk_client.agents.modify(
        agent_id=agent_state.id, llm_config=dict(agent_state.llm_config.model_dump(), **{"parallel_tool_calls": True})
    )
    yield agent_state
    sdk_client.agents.delete(agent_id=agent_state.id)


def test_it_derives_the_tool_from_the_source_the_sdk_sends(approval_tool: Tool) -> None:
    assert approval_tool.name == "get_secret_code_tool"
    assert approval_tool.default_requires_approval is True
    assert approval_tool.description.startswith("A tool that returns the secret code")
    assert approval_tool.json_schema["parameters"]["required"] == ["input_text"]
    assert approval_tool.return_char_limit == 50000


def test_it_creates_and_modifies_the_seed_agent(sdk_client: Letta, agent: AgentState) -> None:
    assert agent.llm_config.parallel_tool_calls is True
    assert agent.llm_config.enable_reasoner is True
    assert agent.llm_config.handle == "anthropic/claude-sonnet-4-5-20250929"
    assert [(r.tool_name, r.type) for r in agent.tool_rules] == [("get_secret_code_tool", "requires_approval")]
    assert {t.name for t in agent.tools} == {"get_secret_code_tool", "roll_dice_tool"}
    assert len(agent.message_ids) == 2
    assert sdk_client.agents.retrieve(agent_id=agent.id).llm_config.parallel_tool_calls is True

    [login] = sdk_client.agents.messages.list(agent_id=agent.id, limit=1)
    assert login.message_type == "user_message"
    assert json.loads(login.content)["last_login"] == "Never (first login)"


def test_it_turns_approval_off_for_one_agent(sdk_client: Letta, agent: AgentState, approval_tool: Tool) -> None:
    state = sdk_client.agents.tools.modify_approval(
        agent_id=agent.id, tool_name=approval_tool.name, requires_approval=False
    )

    assert state.tool_rules == []
    assert sdk_client.tools.retrieve(tool_id=approval_tool.id).default_requires_approval is True


def test_it_lists_and_filters_agents_and_tools(sdk_client: Letta, agent: AgentState, dice_tool: Tool) -> None:
    assert [a.id for a in sdk_client.agents.list(tags=["approval_test"], name="approval_test_agent")] == [agent.id]
    assert [t.id for t in sdk_client.tools.list(name="roll_dice_tool")] == [dice_tool.id]
    assert {t.name for t in sdk_client.agents.tools.list(agent_id=agent.id)} == {
        "get_secret_code_tool",
        "roll_dice_tool",
    }


def test_it_deletes_tools_and_agents_with_letta_bodies(sdk_client: Letta) -> None:
    tool = sdk_client.tools.upsert_from_function(func=roll_dice_tool)
    agent = sdk_client.agents.create(name="short-lived", tool_ids=[tool.id])

    assert sdk_client.agents.delete(agent_id=agent.id) == {"message": f"Agent id={agent.id} successfully deleted"}
    assert sdk_client.tools.delete(tool_id=tool.id) is None
    with pytest.raises(ApiError) as missing:
        sdk_client.agents.retrieve(agent_id=agent.id)
    assert missing.value.status_code == 404


def test_it_surfaces_letta_errors_through_the_sdk(sdk_client: Letta, letta_server: LiveServer) -> None:
    with pytest.raises(ApiError, match="Embedding model nope is not supported by openai") as error:
        sdk_client.agents.create(name="bad", embedding="openai/nope")
    assert error.value.status_code == 400

    with pytest.raises(ApiError) as unauthorized:
        Letta(base_url=letta_server.url, token="sk-agent-wrong").agents.list()
    assert unauthorized.value.status_code == 401
