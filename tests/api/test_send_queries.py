"""How many queries a blocking turn costs (DESIGN §10: a constant per step, whatever the history).

The agent is an integrator's: one source tool, no base tools, the Anthropic path
against the fake model over HTTP. Statements are counted without the savepoints that
the test's transaction turns each ``atomic`` block into (a server sends BEGIN and COMMIT
for them instead: the autocommit test counts those transactions). Fewer queries is
welcome: lower the pins when a change saves some.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.support.api import api_client
from tests.support.streams import TOOL_TURN

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from agents.models import Agent
    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

# A run's end carries the memory panel and the context meter to the agent's open tabs (issue 20,
# item 4: 6 queries once per run); with no tab listening, as here, it is not measured (issue 24).
# The key is read once, then remembered by the process (``accounts.api_key_cache``; issue 24).
# Statements (savepoints left out), on Postgres, where a run's writes go together in one statement
# (``agents.runs.writes``; SQLite has no writes in a ``WITH``, so there they go one by one).
# Issue 24's third round: the agent read by the start's row lock, the provider, the tools and the
# first memory section read in the start's transaction, the memory section in one query, the step's
# start and the answer guarded by the cancel check, the last answer written with the run's end.
# Fourth round: the provider, the tools and the first memory section kept by the process under the
# agent's ``setup_revision`` (``agents.runs.setup_cache``), which the start's row lock reads.
TEXT_TURN_QUERIES = 4  # 7 before it (16 before the third round; 36 before issue 15, 30 before issue 24)
TOOL_TURN_QUERIES = 8  # 11 before it (26 before the third round; 49 before issue 15, 39 before issue 24)
TOOL_PROMPT = "Call the roll_dice with a 6-sided dice."


# Counted in autocommit, as a server runs (``transaction=True``: no test transaction, so no savepoints):
# statements sent, and transactions (a BEGIN…COMMIT block, or one statement on its own).
TEXT_TURN_STATEMENTS = 4  # 7 before the fourth round, 16 before the third (20 before the writes were grouped)
TEXT_TURN_TRANSACTIONS = 3  # 3 before the fourth round, 11 before the third (18 before that)
TOOL_TURN_STATEMENTS = 8  # 11 before the fourth round, 26 before the third (30 before that)
TOOL_TURN_TRANSACTIONS = 7  # 7 before the fourth round, 20 before the third (28 before that)

on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the pins are Postgres's: SQLite sends grouped writes one by one"
)


def a_turn(api: APIClient, agent: Agent, text: str) -> tuple[list[str], list[str]]:
    """The SQL one blocking turn sends (savepoints left out), and the types of the messages it answered."""
    with CaptureQueriesContext(connection) as captured:
        response = api.post(
            f"/v1/agents/{agent.public_id}/messages",
            {"messages": [{"role": "user", "content": text}]},
            format="json",
        )
    assert response.status_code == 200, response.content
    assert response.json()["stop_reason"]["stop_reason"] == "end_turn"
    sql = [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]
    # The key is remembered by the process while the shared access generation stands; any process on
    # the same Redis that saves a key or a user renews it, and the next request reads the key again
    # (``accounts.api_key_cache``): that read is not the turn's, so it is left out of the count.
    key = [q for q in sql if '"accounts_apikey"' in q]
    assert len(key) <= 2, key  # at most the key's read and its ``last_used_at``
    turn = [q for q in sql if q not in key]
    return turn, [m["message_type"] for m in response.json()["messages"]]


def queries_of_a_turn(api: APIClient, agent: Agent, text: str) -> tuple[int, list[str]]:
    """The statements of one blocking turn, and the types of the messages it answered."""
    sql, messages = a_turn(api, agent, text)
    return len(sql), messages


def statements_and_transactions(api: APIClient, agent: Agent, text: str) -> tuple[int, int]:
    """What one blocking turn sends in autocommit: its statements, and the transactions they form
    (a BEGIN…COMMIT block, or one statement on its own)."""
    statements = transactions = 0
    inside = False
    for sql in a_turn(api, agent, text)[0]:
        if sql == "BEGIN":
            inside, transactions = True, transactions + 1
        elif sql == "COMMIT":
            inside = False
        else:
            statements += 1
            transactions += 0 if inside else 1
    assert not inside
    return statements, transactions


@on_postgres
def test_a_blocking_text_turn_costs_at_most_its_pinned_queries(cast: Cast, claude: Agent) -> None:
    api = api_client(cast.org_a)
    queries_of_a_turn(api, claude, "hello")  # the first turn of a fresh agent

    count, messages = queries_of_a_turn(api, claude, "hello")

    assert messages == ["reasoning_message", "assistant_message"]
    assert count <= TEXT_TURN_QUERIES


@on_postgres
def test_a_turn_with_one_tool_call_costs_at_most_its_pinned_queries(cast: Cast, claude: Agent) -> None:
    api = api_client(cast.org_a)
    queries_of_a_turn(api, claude, "hello")

    count, messages = queries_of_a_turn(api, claude, TOOL_PROMPT)

    assert messages == list(TOOL_TURN)
    assert count <= TOOL_TURN_QUERIES


def test_a_turn_costs_the_same_queries_however_long_the_history(cast: Cast, claude: Agent) -> None:
    api = api_client(cast.org_a)
    queries_of_a_turn(api, claude, "hello")
    early, _ = queries_of_a_turn(api, claude, "hello")
    for _ in range(6):
        queries_of_a_turn(api, claude, TOOL_PROMPT)

    late, _ = queries_of_a_turn(api, claude, "hello")

    assert late == early


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_turn_in_autocommit_sends_at_most_its_pinned_statements_in_its_pinned_transactions(
    cast: Cast, claude: Agent
) -> None:
    api = api_client(cast.org_a)
    statements_and_transactions(api, claude, "hello")  # the first turn of a fresh agent

    text = statements_and_transactions(api, claude, "hello")
    tool = statements_and_transactions(api, claude, TOOL_PROMPT)

    assert text[0] <= TEXT_TURN_STATEMENTS
    assert text[1] <= TEXT_TURN_TRANSACTIONS
    assert tool[0] <= TOOL_TURN_STATEMENTS
    assert tool[1] <= TOOL_TURN_TRANSACTIONS
