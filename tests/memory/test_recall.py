"""``conversation_search`` over the whole history: ranking, evicted rows, roles, scoping."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync

from agents import services
from agents.models import Agent, Message
from tests.factories import AgentFactory
from tests.tools.helpers import FAST_LIMITS
from tools.base import ToolContext, ToolSpec
from tools.builtins import default_registry
from tools.runtime import DefaultToolRunner

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent() -> Agent:
    agent = AgentFactory(name="recaller", memory_blocks=[])
    lines = [
        ("user", "We talked about the garden and the roses."),
        ("assistant", "Roses need sun."),
        ("user", "The café near the station serves crêpes."),
        ("assistant", "Noted the roses."),
    ]
    for seq, (role, text) in enumerate(lines, start=2):
        Message.objects.create(
            organization=agent.organization, agent=agent, seq=seq, role=role, content=[{"type": "text", "text": text}]
        )
    Message.objects.create(
        organization=agent.organization,
        agent=agent,
        seq=6,
        role="tool",
        tool_returns=[{"tool_call_id": "c1", "name": "x", "status": "success", "tool_return": "roses in a tool"}],
    )
    # Everything so far has left the context window: search still sees it.
    Agent.objects.filter(pk=agent.pk).update(context_start_seq=7)
    return agent


def search(agent: Agent, **arguments: object) -> list[dict]:
    builtin = default_registry().get("conversation_search")
    spec = ToolSpec(name="conversation_search", kind="builtin", json_schema=builtin.json_schema)
    context = ToolContext(organization_id=agent.organization_id, agent_id=agent.id)
    outcome = async_to_sync(DefaultToolRunner(limits=FAST_LIMITS).run)(spec, json.dumps(arguments), context)
    assert outcome.status == "success", outcome.tool_return
    if outcome.tool_return == "No results found.":
        return []
    return json.loads(outcome.tool_return.partition(": ")[2])


def test_rows_matching_more_words_rank_first_and_evicted_rows_are_found(agent: Agent) -> None:
    results = search(agent, query="garden roses")

    assert [r["content"] for r in results] == [
        "We talked about the garden and the roses.",
        "Noted the roses.",
        "Roses need sun.",
    ]
    assert set(results[0]) == {"timestamp", "time_ago", "role", "relevance", "content"}
    assert results[0]["relevance"] >= results[-1]["relevance"]


def test_tool_results_are_searched_only_when_asked_for(agent: Agent) -> None:
    default = search(agent, query="roses")
    tools = search(agent, query="roses", roles=["tool"])

    assert all(r["role"] != "tool" for r in default)
    assert [r["content"] for r in tools] == ["roses in a tool"]


def test_words_with_accents_are_found(agent: Agent) -> None:
    assert [r["content"] for r in search(agent, query="café")] == ["The café near the station serves crêpes."]


def test_another_agents_history_is_never_searched(agent: Agent) -> None:
    other = services.agent_create(organization=agent.organization, name="other", memory_blocks=[])

    assert search(other, query="roses") == []
