"""``memory_updated``: every edit of a block is announced, after commit, to every agent it is attached to;
a tool's edit inside an executing run, in the run's order (after the tool row that holds it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from agents import services
from agents.broadcast import agent_group
from agents.engine.inputs import TurnRequest
from agents.memory import services as memory_services
from agents.models import Agent, Block
from agents.runs.execute import start_inline
from agents.runs.start import RunMode, run_start
from tests.conftest import Cast
from tests.factories import OrganizationFactory, RunFactory
from tests.fakes import ScriptedLLM, reply
from tests.memory.tool_calls import call, run_tool, store_result
from tests.support.api import api_client

IN_MEMORY_LAYER = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture(autouse=True)
def in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER


class Listener:
    """A channel in an agent's group, as an open chat tab has."""

    def __init__(self, agent: Agent) -> None:
        self.layer = get_channel_layer()
        self.channel = async_to_sync(self.layer.new_channel)()
        async_to_sync(self.layer.group_add)(agent_group(agent.id), self.channel)

    def payloads(self) -> list[dict[str, Any]]:
        """Every payload received so far (waits briefly for none to be missed)."""

        async def drain() -> list[dict[str, Any]]:
            received: list[dict[str, Any]] = []
            while True:
                try:
                    message = await asyncio.wait_for(self.layer.receive(self.channel), timeout=0.2)
                except TimeoutError:
                    return received
                received.extend(message["events"])

        return async_to_sync(drain)()


@pytest.mark.django_db(transaction=True)
def test_a_memory_tools_edit_is_announced_with_its_run_and_tool_row_once_its_result_is_stored() -> None:
    agent = services.agent_create(organization=OrganizationFactory(), name="editor")
    run = RunFactory(organization=agent.organization, agent=agent)
    tab = Listener(agent)

    outcome = run_tool(agent, "memory_insert", run=run, label="human", new_str="Likes tea.")
    assert tab.payloads() == []  # staged: nothing changed, nothing announced, until the result is stored
    row = store_result(agent, run, "memory_insert", outcome)

    human = Block.objects.get(agent_blocks__agent=agent, label="human")
    assert outcome.status == "success"
    assert tab.payloads() == [
        {
            "type": "memory_updated",
            "block": {
                "id": human.public_id,
                "label": "human",
                "value": human.value,
                "limit": human.limit,
                "chars": len(human.value),
                "read_only": False,
                "description": human.description,
            },
            "agent_ids": [agent.public_id],
            "by": "tool",
            "run_id": run.public_id,
            "message_id": row.public_id,
        }
    ]
    assert human.value.endswith("Likes tea.")


@pytest.mark.django_db(transaction=True)
def test_a_refused_tool_edit_announces_nothing() -> None:
    agent = services.agent_create(
        organization=OrganizationFactory(), name="editor", memory_blocks=[{"label": "human", "value": "x", "limit": 3}]
    )
    tab = Listener(agent)

    outcome = call(agent, "memory_insert", label="human", new_str="far too long")

    assert outcome.status == "error"
    assert tab.payloads() == []


@pytest.mark.django_db
def test_an_api_edit_is_announced_only_once_the_transaction_commits(
    cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    agent = services.agent_create(organization=cast.org_a, name="keeper")
    tab = Listener(agent)
    api = api_client(cast.org_a, cast.alice)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.patch(
            f"/v1/agents/{agent.public_id}/core-memory/blocks/human", {"value": "Name: Alice"}, format="json"
        )
        assert tab.payloads() == []  # nothing before the commit
    for callback in callbacks:
        callback()

    [payload] = tab.payloads()
    assert response.status_code == 200
    assert (payload["type"], payload["by"], payload["run_id"]) == ("memory_updated", "api", None)
    assert payload["block"]["value"] == "Name: Alice"
    assert payload["block"]["chars"] == len("Name: Alice")
    assert "seq" not in payload


@pytest.mark.django_db
def test_two_agents_sharing_a_block_both_hear_an_edit_of_it(
    cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    shared = memory_services.block_create(organization=cast.org_a, label="team", value="Standup at 9.")
    first = services.agent_create(organization=cast.org_a, name="first", block_ids=[shared.public_id])
    second = services.agent_create(organization=cast.org_a, name="second", block_ids=[shared.public_id])
    loner = services.agent_create(organization=cast.org_a, name="loner")
    tabs = [Listener(first), Listener(second), Listener(loner)]
    api = api_client(cast.org_a, cast.alice)

    with django_capture_on_commit_callbacks(execute=True):
        response = api.patch(f"/v1/blocks/{shared.public_id}", {"value": "Standup at 10."}, format="json")

    first_heard, second_heard, loner_heard = (tab.payloads() for tab in tabs)
    assert response.status_code == 200
    assert first_heard == second_heard
    assert [p["block"]["value"] for p in first_heard] == ["Standup at 10."]
    assert sorted(first_heard[0]["agent_ids"]) == sorted([first.public_id, second.public_id])
    assert loner_heard == []


def execute_inline(agent: Agent, script: list[Any]) -> list[Any]:
    """Start a run of ``agent`` as a blocking REST call does, and execute it with a scripted model."""
    request = TurnRequest.parse({"messages": [{"role": "user", "content": "Remember that I like tea."}]})
    run = run_start(agent=agent, request=request, mode=RunMode.INLINE)

    async def execute() -> list[Any]:
        execution = await start_inline(run, request, stream_tokens=False, llm=ScriptedLLM(script))
        return [event async for event in execution.events()]

    return async_to_sync(execute)()


@pytest.mark.django_db(transaction=True)
def test_a_tools_edit_in_an_executing_run_is_announced_right_after_its_tool_row_and_before_the_end() -> None:
    agent = services.agent_create(organization=OrganizationFactory(), name="editor", include_base_tools=True)
    tab = Listener(agent)
    insert = ("memory_insert", {"label": "human", "new_str": "Likes tea.", "insert_line": -1})

    execute_inline(agent, [reply("Noting it.", tool_calls=[insert]), reply("Noted.")])

    heard = tab.payloads()
    kinds = [(p["type"], p.get("row", {}).get("role")) for p in heard]
    [edit] = [p for p in heard if p["type"] == "memory_updated"]
    at = heard.index(edit)
    assert edit["block"]["value"].endswith("Likes tea.")
    assert (heard[at - 1]["type"], heard[at - 1]["row"]["id"]) == ("message", edit["message_id"])
    assert kinds[at - 1] == ("message", "tool")
    assert kinds[at + 1 :] == [("message", "assistant"), ("run_finished", None)]


@pytest.mark.django_db(transaction=True)
def test_a_tools_edit_of_a_shared_block_in_a_run_reaches_the_other_agent_too() -> None:
    organization = OrganizationFactory()
    shared = memory_services.block_create(organization=organization, label="team", value="Standup at 9.")
    editor = services.agent_create(
        organization=organization, name="editor", include_base_tools=True, block_ids=[shared.public_id]
    )
    other = services.agent_create(organization=organization, name="other", block_ids=[shared.public_id])
    editors_tab, others_tab = Listener(editor), Listener(other)
    insert = ("memory_insert", {"label": "team", "new_str": "Retro on Fridays.", "insert_line": -1})

    execute_inline(editor, [reply("Noting it.", tool_calls=[insert]), reply("Noted.")])

    [in_run] = [p for p in editors_tab.payloads() if p["type"] == "memory_updated"]
    assert others_tab.payloads() == [in_run]
    assert in_run["block"]["value"].endswith("Retro on Fridays.")
