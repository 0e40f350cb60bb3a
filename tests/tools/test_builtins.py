"""Built-in tools through DefaultToolRunner, scoped to the calling organization and agent."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone

from agents.models import Message
from tests.factories import AgentFactory
from tests.tools.helpers import FAST_LIMITS, NO_CONTEXT
from tools.base import ToolContext, ToolSpec
from tools.builtins import base_registry, default_registry
from tools.runtime import DefaultToolRunner


def _spec(name: str) -> ToolSpec:
    builtin = default_registry().get(name)
    assert builtin is not None
    return ToolSpec(name=name, kind="builtin", json_schema=builtin.json_schema)


def _call(name: str, arguments: dict, context: ToolContext = NO_CONTEXT, runner: DefaultToolRunner | None = None):
    runner = runner or DefaultToolRunner(limits=FAST_LIMITS)
    return async_to_sync(runner.run)(_spec(name), json.dumps(arguments), context)


def _results(outcome) -> list[dict]:
    prefix, _, listed = outcome.tool_return.partition(": ")
    results = json.loads(listed)
    assert prefix == f"Showing {len(results)} results"
    return results


def _say(agent, seq: int, role: str, text: str, *, days_ago: int = 0) -> Message:
    message = Message.objects.create(
        organization=agent.organization, agent=agent, seq=seq, role=role, content=[{"type": "text", "text": text}]
    )
    if days_ago:
        Message.objects.filter(pk=message.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return message


@pytest.fixture
def conversations(cast):
    mine = AgentFactory(organization=cast.org_a)
    sibling = AgentFactory(organization=cast.org_a)
    foreign = AgentFactory(organization=cast.org_b)
    # After each agent's system and login rows (seq 0 and 1).
    _say(mine, 2, "user", "My favourite colour is TEAL.", days_ago=10)
    _say(mine, 3, "assistant", "Noted: teal it is.")
    _say(mine, 4, "system", "teal system prompt")
    _say(sibling, 2, "user", "Teal is for the sibling agent only.")
    _say(foreign, 2, "user", "Teal secrets of another organization.")
    return mine, sibling, foreign


@pytest.mark.django_db
def test_conversation_search_finds_the_calling_agents_own_messages(cast, conversations):
    mine, _, _ = conversations
    outcome = _call("conversation_search", {"query": "teal"}, ToolContext(cast.org_a.pk, mine.pk))
    results = _results(outcome)
    assert [(row["role"], row["content"]) for row in results] == [
        ("assistant", "Noted: teal it is."),
        ("user", "My favourite colour is TEAL."),
    ]


@pytest.mark.django_db
def test_conversation_search_sees_nothing_of_another_organization(cast, conversations):
    mine, _, foreign = conversations
    # org B naming org A's agent, and org A naming org B's agent: both find nothing.
    assert _call("conversation_search", {"query": "teal"}, ToolContext(cast.org_b.pk, mine.pk)).tool_return == (
        "No results found."
    )
    assert _call("conversation_search", {"query": "teal"}, ToolContext(cast.org_a.pk, foreign.pk)).tool_return == (
        "No results found."
    )


@pytest.mark.django_db
def test_conversation_search_filters_by_role_date_and_limit(cast, conversations):
    mine, _, _ = conversations
    context = ToolContext(cast.org_a.pk, mine.pk)
    by_role = _results(_call("conversation_search", {"query": "teal", "roles": ["user"]}, context))
    assert [row["role"] for row in by_role] == ["user"]
    recent = (timezone.now() - timedelta(days=1)).date().isoformat()
    by_date = _results(_call("conversation_search", {"query": "teal", "start_date": recent}, context))
    assert [row["content"] for row in by_date] == ["Noted: teal it is."]
    old = (timezone.now() - timedelta(days=10)).date().isoformat()
    until = _results(_call("conversation_search", {"query": "teal", "end_date": old}, context))
    assert [row["content"] for row in until] == ["My favourite colour is TEAL."]
    limited = _results(_call("conversation_search", {"query": "teal", "limit": "1"}, context))
    assert len(limited) == 1


@pytest.mark.django_db
def test_conversation_search_explains_a_bad_date(cast, conversations):
    mine, _, _ = conversations
    outcome = _call(
        "conversation_search", {"query": "x", "start_date": "last week"}, ToolContext(cast.org_a.pk, mine.pk)
    )
    assert outcome.status == "error"
    assert outcome.tool_return == ("start_date must be ISO 8601: 'YYYY-MM-DD' or 'YYYY-MM-DDTHH:MM', got 'last week'.")


def test_get_current_time_answers_in_the_asked_time_zone():
    outcome = _call("get_current_time", {"timezone": "Asia/Tokyo"})
    assert outcome.status == "success"
    assert "+09:00 (" in outcome.tool_return
    assert outcome.tool_return.endswith(", Asia/Tokyo)")


def test_get_current_time_explains_an_unknown_time_zone():
    outcome = _call("get_current_time", {"timezone": "Mars/Olympus"})
    assert (outcome.status, outcome.tool_return) == (
        "error",
        "Unknown time zone 'Mars/Olympus'; use an IANA name such as 'Europe/Paris' or 'UTC'.",
    )


def test_send_message_returns_none_like_letta():
    outcome = _call("send_message", {"message": "Hello!"})
    assert (outcome.status, outcome.tool_return) == ("success", "None")


def test_run_code_runs_python_in_the_sandbox(sandbox):
    runner = DefaultToolRunner(sandbox=sandbox, limits=FAST_LIMITS)
    outcome = _call(
        "run_code", {"language": "python", "code": "import math\nprint('hi')\nmath.sqrt(16)"}, runner=runner
    )
    assert json.loads(outcome.tool_return) == {
        "results": ["4.0"],
        "logs": {"stdout": ["hi\n"], "stderr": []},
        "error": None,
    }


def test_run_code_reports_the_codes_own_error_as_output(sandbox):
    runner = DefaultToolRunner(sandbox=sandbox, limits=FAST_LIMITS)
    outcome = _call("run_code", {"language": "python", "code": "x = 1\n1 / 0\n"}, runner=runner)
    result = json.loads(outcome.tool_return)
    assert outcome.status == "success"
    assert result["error"] == "Error executing code: ZeroDivisionError: division by zero (tool line 2)"


def test_run_code_refuses_languages_it_cannot_run():
    outcome = _call("run_code", {"language": "js", "code": "1"})
    assert (outcome.status, outcome.tool_return) == ("error", "run_code supports only python on this server, not 'js'.")


def test_a_tool_this_server_cannot_perform_answers_with_an_honest_error():
    outcome = _call("send_message_to_agent_async", {"message": "hi", "other_agent_id": "agent-1"})
    assert outcome.status == "error"
    assert outcome.tool_return == (
        "send_message_to_agent_async is not available: messaging between agents is not implemented on this server yet."
    )


def test_the_registry_is_an_explicit_list_of_uniquely_named_builtins():
    registry = default_registry()
    assert len(registry) == len(set(registry.names())) == 27
    assert default_registry().names() == registry.names()


def test_the_demo_tools_are_built_ins_outside_lettas_base_set():
    assert {"roll_dice", "get_secret_code"} <= set(default_registry().names())
    assert not {"roll_dice", "get_secret_code"} & set(base_registry().names())
    assert len(base_registry()) == 25


def test_roll_dice_answers_a_number_within_the_sides_and_refuses_a_bad_count():
    rolled = _call("roll_dice", {"num_sides": 6})
    refused = _call("roll_dice", {"num_sides": 0})

    assert rolled.status == "success" and 1 <= int(rolled.tool_return) <= 6
    assert refused.status == "error" and "between 1 and" in refused.tool_return
