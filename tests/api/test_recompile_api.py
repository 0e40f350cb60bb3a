"""``POST /v1/agents/{id}/recompile``: the agent's system prompt with its memory, as a JSON string."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agents import services

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db


def test_recompile_answers_the_prompt_with_the_agents_memory(alice_api: APIClient, cast: Cast) -> None:
    agent = services.agent_create(
        organization=cast.org_a,
        name="r",
        model="demo/echo-1",
        system="Be brief.",
        memory_blocks=[{"label": "human", "value": "Name: Alice"}],
    )

    response = alice_api.post(f"/v1/agents/{agent.public_id}/recompile?dry_run=true")
    alias = alice_api.post(f"/v1/agents/{agent.public_id}/system-prompt/recompile")

    assert response.status_code == 200
    prompt = response.json()
    assert isinstance(prompt, str)
    assert prompt.startswith("Be brief.")
    assert "Name: Alice" in prompt
    assert alias.json() == prompt


def test_recompile_of_an_agent_without_a_system_message_is_a_404(alice_api: APIClient, cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, name="r", model="demo/echo-1")
    agent.messages.filter(role="system").delete()

    response = alice_api.post(f"/v1/agents/{agent.public_id}/recompile")

    assert (response.status_code, response.json()) == (
        404,
        {"detail": f"No system message found for agent '{agent.public_id}'"},
    )
