"""``messages.list``: Letta's cursor semantics, in the selector and through the API."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from agents import selectors, services
from agents.errors import NotFound
from agents.models import Agent, Message
from tests.conftest import Cast
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


def conversation(agent: Agent, count: int) -> list[Message]:
    """``count`` user rows after the agent's system and login rows."""
    return [
        MessageFactory(agent=agent, seq=2 + i, role="user", content=[{"type": "text", "text": f"m{i}"}])
        for i in range(count)
    ]


def seqs(rows: list[Message]) -> list[int]:
    return [row.seq for row in rows]


def test_it_returns_the_newest_page_in_chronological_order(agent: Agent) -> None:
    conversation(agent, 5)

    assert seqs(selectors.message_list(agent=agent, limit=3)) == [4, 5, 6]


def test_it_returns_the_oldest_page_with_order_asc(agent: Agent) -> None:
    conversation(agent, 5)

    assert seqs(selectors.message_list(agent=agent, limit=3, order="asc")) == [1, 2, 3]


def test_it_never_lists_the_system_row(agent: Agent) -> None:
    assert seqs(selectors.message_list(agent=agent)) == [1]
    assert seqs(selectors.message_list(agent=agent, include_system=True)) == [0, 1]


def test_it_lists_strictly_newer_rows_after_a_cursor(agent: Agent) -> None:
    rows = conversation(agent, 4)

    assert seqs(selectors.message_list(agent=agent, after=rows[1].public_id)) == [4, 5]


def test_it_lists_strictly_older_rows_before_a_cursor(agent: Agent) -> None:
    rows = conversation(agent, 4)

    assert seqs(selectors.message_list(agent=agent, before=rows[2].public_id, limit=2)) == [2, 3]


def test_it_combines_after_and_before(agent: Agent) -> None:
    rows = conversation(agent, 5)

    assert seqs(selectors.message_list(agent=agent, after=rows[0].public_id, before=rows[4].public_id)) == [3, 4, 5]


def test_it_treats_a_cursor_of_another_agent_as_not_found(cast: Cast, agent: Agent) -> None:
    other = services.agent_create(organization=cast.org_a, name="other")
    foreign_row = Message.objects.filter(agent=other).last()
    assert foreign_row is not None

    with pytest.raises(NotFound):
        selectors.message_list(agent=agent, after=foreign_row.public_id)


def test_it_lists_the_login_message_of_a_new_agent_with_limit_1(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.get(f"/v1/agents/{agent.public_id}/messages", {"limit": 1})

    assert response.status_code == 200
    [message] = response.json()
    assert message["message_type"] == "user_message"
    assert message["id"] == Message.objects.get(agent=agent, seq=1).public_id
    assert '"type": "login"' in message["content"]
    assert message["otid"] is None


def test_it_counts_rows_not_letta_messages(alice_api: APIClient, agent: Agent) -> None:
    MessageFactory(
        agent=agent,
        seq=2,
        role="assistant",
        content=[{"type": "reasoning", "text": "hm", "signature": "s"}, {"type": "text", "text": "hi"}],
        tool_calls=[{"id": "toolu_1", "name": "t", "arguments": "{}", "requires_approval": True}],
    )

    response = alice_api.get(f"/v1/agents/{agent.public_id}/messages?limit=1")

    assert [m["message_type"] for m in response.json()] == [
        "reasoning_message",
        "assistant_message",
        "approval_request_message",
    ]


def test_it_pages_with_after_through_the_api(alice_api: APIClient, agent: Agent) -> None:
    rows = conversation(agent, 3)

    response = alice_api.get(f"/v1/agents/{agent.public_id}/messages/", {"after": rows[0].public_id})

    assert [m["id"] for m in response.json()] == [rows[1].public_id, rows[2].public_id]


def test_it_answers_404_for_an_unknown_cursor(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.get(f"/v1/agents/{agent.public_id}/messages", {"after": "message-nope"})

    assert response.status_code == 404
    assert response.json() == {"detail": "Message message-nope not found"}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"limit": "many"}, "limit"),
        ({"limit": 0}, "limit"),
        ({"order": "sideways"}, "order"),
        ({"use_assistant_message": -169}, "use_assistant_message"),
        ({"include_err": "maybe"}, "include_err"),
    ],
)
def test_it_rejects_bad_query_parameters_naming_them(
    alice_api: APIClient, agent: Agent, query: dict[str, Any], field: str
) -> None:
    response = alice_api.get(f"/v1/agents/{agent.public_id}/messages", query)

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", field]


def test_it_rejects_other_org(charlie_api: APIClient, agent: Agent) -> None:
    response = charlie_api.get(f"/v1/agents/{agent.public_id}/messages")

    assert response.status_code == 404
    assert response.json() == {"detail": "Agent not found"}
