"""Database work per step does not grow with the length of the conversation."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.engine.inputs import UserInput
from agents.models import Message
from tests.engine.conftest import STANDARD_TOOLS, Harness, make_agent
from tests.fakes import reply

pytestmark = pytest.mark.django_db(transaction=True)


def add_history(harness: Harness, turns: int) -> None:
    for _ in range(turns):
        async_to_sync(harness.turn)([UserInput("earlier")], [reply("earlier answer")])


def queries_for_one_tool_turn(harness: Harness) -> int:
    with CaptureQueriesContext(connection) as captured:
        async_to_sync(harness.turn)(
            [UserInput("roll")], [reply("r", tool_calls=[("roll_dice", {"num_sides": 6})]), reply("done")]
        )
    return len(captured.captured_queries)


def test_a_turn_costs_the_same_queries_with_a_long_history_as_with_a_short_one():
    short = Harness(async_to_sync(make_agent)(), STANDARD_TOOLS)
    long = Harness(async_to_sync(make_agent)(), STANDARD_TOOLS)
    add_history(short, 1)
    add_history(long, 40)
    assert Message.objects.filter(agent=long.agent).count() > 80

    assert queries_for_one_tool_turn(long) == queries_for_one_tool_turn(short)


def test_a_context_reset_keeps_old_rows_out_of_the_model_request():
    harness = Harness(async_to_sync(make_agent)(), STANDARD_TOOLS)
    add_history(harness, 3)
    from agents.runs.preview import agent_reset_messages

    agent_reset_messages(agent=harness.agent)
    harness.agent.refresh_from_db()

    async_to_sync(harness.turn)([UserInput("fresh start")], [reply("hi")])

    sent = harness.llm.requests[0]
    assert [t.role for t in sent.turns] == ["user", "user"]
    assert sent.turns[-1].text == "fresh start"
