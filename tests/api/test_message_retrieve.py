"""``GET /v1/messages/{message_id}``: one stored row as its LettaMessages, as Letta Code reads it at startup."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents.models import Agent
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


def test_a_pending_approval_row_shows_its_approval_request_last_part_first(alice_api: APIClient, agent: Agent) -> None:
    row = MessageFactory(
        agent=agent,
        role="assistant",
        content=[{"type": "text", "text": "I will run it."}],
        tool_calls=[{"id": "toolu_1", "name": "Bash", "arguments": '{"command": "ls"}', "requires_approval": True}],
    )

    response = alice_api.get(f"/v1/messages/{row.public_id}")

    assert response.status_code == 200
    parts = response.json()
    assert [part["message_type"] for part in parts] == ["approval_request_message", "assistant_message"]
    assert {part["id"] for part in parts} == {row.public_id}
    assert parts[0]["tool_call"]["tool_call_id"] == "toolu_1"


def test_a_user_row_shows_as_one_user_message(alice_api: APIClient, agent: Agent) -> None:
    row = MessageFactory(agent=agent, content=[{"type": "text", "text": "hello"}])

    [part] = alice_api.get(f"/v1/messages/{row.public_id}").json()

    assert (part["message_type"], part["content"]) == ("user_message", "hello")


def test_an_unknown_message_is_a_404(alice_api: APIClient) -> None:
    response = alice_api.get("/v1/messages/message-00000000-0000-4000-8000-000000000000")

    assert response.status_code == 404
