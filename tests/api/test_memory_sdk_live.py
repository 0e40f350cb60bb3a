"""Core and archival memory through the official ``letta-client`` (0.1.324) against a live server."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from letta_client import CreateBlock, Letta
from letta_client.core.api_error import ApiError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from letta_client import AgentState


pytestmark = [pytest.mark.live_server, pytest.mark.sdk]


@pytest.fixture
def agent(sdk_client: Letta) -> Iterator[AgentState]:
    state = sdk_client.agents.create(
        name="sdk-memory",
        model="demo/echo-1",
        embedding="demo/hashed-256",
        memory_blocks=[CreateBlock(label="human", value="Name: Alice"), CreateBlock(label="persona", value="Kind.")],
    )
    yield state
    sdk_client.agents.delete(agent_id=state.id)


def test_the_sdk_reads_and_edits_an_agents_blocks(sdk_client: Letta, agent: AgentState) -> None:
    assert [block.label for block in agent.memory.blocks] == ["human", "persona"]
    assert [block.label for block in sdk_client.agents.blocks.list(agent_id=agent.id)] == ["human", "persona"]

    modified = sdk_client.agents.blocks.modify(agent_id=agent.id, block_label="human", value="Name: Alice Liddell")

    assert modified.value == "Name: Alice Liddell"
    assert sdk_client.agents.blocks.retrieve(agent_id=agent.id, block_label="human").value == "Name: Alice Liddell"
    assert sdk_client.agents.core_memory.retrieve(agent_id=agent.id).blocks[0].value == "Name: Alice Liddell"
    with pytest.raises(ApiError) as missing:
        sdk_client.agents.blocks.retrieve(agent_id=agent.id, block_label="nope")
    assert missing.value.status_code == 404


def test_the_sdk_manages_organization_blocks_and_shares_one_between_agents(
    sdk_client: Letta, agent: AgentState
) -> None:
    block = sdk_client.blocks.create(label="team", value="Standup at 9.", description="Team notes.")

    attached = sdk_client.agents.blocks.attach(agent_id=agent.id, block_id=block.id)
    listed = sdk_client.blocks.list(label="team")
    users = sdk_client.blocks.agents.list(block_id=block.id)
    sdk_client.blocks.modify(block_id=block.id, value="Standup at 10.")
    detached = sdk_client.agents.blocks.detach(agent_id=agent.id, block_id=block.id)
    sdk_client.blocks.delete(block_id=block.id)

    assert [b.label for b in attached.memory.blocks] == ["human", "persona", "team"]
    assert [b.id for b in listed] == [block.id]
    assert [a.id for a in users] == [agent.id]
    assert [b.label for b in detached.memory.blocks] == ["human", "persona"]
    with pytest.raises(ApiError):
        sdk_client.blocks.retrieve(block_id=block.id)


def test_the_sdk_inserts_lists_searches_and_deletes_passages(sdk_client: Letta, agent: AgentState) -> None:
    [tea] = sdk_client.agents.passages.create(agent_id=agent.id, text="Alice likes green tea.", tags=["food"])
    sdk_client.agents.passages.create(agent_id=agent.id, text="Alice was born in Oxford.")

    listed = sdk_client.agents.passages.list(agent_id=agent.id)
    found = sdk_client.agents.passages.search(agent_id=agent.id, query="green tea", tags=["food"])
    sdk_client.agents.passages.delete(agent_id=agent.id, memory_id=tea.id)

    assert [p.text for p in listed] == ["Alice likes green tea.", "Alice was born in Oxford."]
    assert found.count == 1 and found.results[0].content == "Alice likes green tea."
    assert [p.text for p in sdk_client.agents.passages.list(agent_id=agent.id)] == ["Alice was born in Oxford."]
