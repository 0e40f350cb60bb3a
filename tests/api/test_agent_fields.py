"""The agent fields Letta Code sends, honoured at create, at update and on every step (LETTA_CONVERSATIONS §4)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from agents.models import Agent, Message
from agents.runs.turns import model_settings
from tests.fake_llm.script import Reply
from tests.tool_sources import DICE_SOURCE
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db

CLAUDE = "anthropic/claude-sonnet-4-6"
LETTA_CODE_CREATE = {
    "agent_type": "letta_v1_agent",
    "name": "Letta Code",
    "model": CLAUDE,
    "system": "You are Letta Code.",
    "tags": ["origin:letta-code"],
    "include_base_tools": False,
    "include_base_tool_rules": False,
    "initial_message_sequence": [],
    "parallel_tool_calls": True,
    "compaction_settings": {"model": "letta/auto"},
    "context_window_limit": 200000,
}


@pytest.fixture
def fake_anthropic(settings, fake_llm):
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.OPENAI_BASE_URL = fake_llm.base_url_openai
    settings.OPENAI_API_KEY = "sk-test"
    return fake_llm


def agent_of(state: dict[str, Any]) -> Agent:
    return Agent.objects.get(pk=Agent.parse_public_id(state["id"]))


def rows_of(state: dict[str, Any]) -> list[Message]:
    return list(Message.objects.filter(agent=agent_of(state)).order_by("seq"))


def create(api: APIClient, **body: Any) -> dict[str, Any]:
    response = api.post("/v1/agents/", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def update(api: APIClient, agent_id: str, **body: Any) -> dict[str, Any]:
    response = api.patch(f"/v1/agents/{agent_id}", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def model_request(api: APIClient, fake_llm, agent_id: str) -> dict[str, Any]:
    fake_llm.script(Reply(text="Hi."))
    response = api.post(
        f"/v1/agents/{agent_id}/messages", {"messages": [{"role": "user", "content": "hi"}]}, format="json"
    )
    assert response.status_code == 200, response.content
    body: dict[str, Any] = fake_llm.requests[-1].body
    return body


def test_letta_codes_create_body_is_honoured(alice_api, fake_anthropic):
    state = create(alice_api, **LETTA_CODE_CREATE)

    assert state["llm_config"]["context_window"] == 200000
    assert state["llm_config"]["parallel_tool_calls"] is True
    assert state["compaction_settings"]["model"] == "letta/auto"
    assert state["compaction_settings"]["mode"] == "sliding_window"
    assert state["compaction_settings"]["sliding_window_percentage"] == 0.3
    assert [r.role for r in rows_of(state)] == ["system"]
    assert len(state["message_ids"]) == 1


def test_letta_codes_model_settings_update_reaches_the_anthropic_request(alice_api, fake_anthropic):
    state = create(alice_api, **LETTA_CODE_CREATE)

    state = update(
        alice_api,
        state["id"],
        model=CLAUDE,
        model_settings={"provider_type": "anthropic", "parallel_tool_calls": True, "max_output_tokens": 64000},
        context_window_limit=200000,
        max_tokens=64000,
    )

    assert state["llm_config"]["max_tokens"] == 64000
    assert state["model_settings"]["max_output_tokens"] == 64000
    assert state["model_settings"]["parallel_tool_calls"] is True
    assert state["model_settings"]["temperature"] == 1.0
    body = model_request(alice_api, fake_anthropic, state["id"])
    assert body["max_tokens"] == 64000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert body["temperature"] == 1.0


def test_anthropic_thinking_budget_and_parallel_tool_use(alice_api, fake_anthropic, cast):
    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE)
    state = create(
        alice_api,
        model=CLAUDE,
        tool_ids=[dice.public_id],
        model_settings={
            "provider_type": "anthropic",
            "max_output_tokens": 20000,
            "thinking": {"type": "enabled", "budget_tokens": 4096},
        },
    )

    body = model_request(alice_api, fake_anthropic, state["id"])
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["max_tokens"] == 20000
    assert body["tool_choice"]["disable_parallel_tool_use"] is False
    assert state["model_settings"]["thinking"] == {"type": "enabled", "budget_tokens": 4096}

    state = update(
        alice_api,
        state["id"],
        model_settings={
            "provider_type": "anthropic",
            "thinking": {"type": "disabled"},
            "temperature": 0.2,
            "parallel_tool_calls": False,
        },
    )

    body = model_request(alice_api, fake_anthropic, state["id"])
    assert "thinking" not in body
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 20000  # kept: no max_output_tokens, no max_tokens
    assert body["tool_choice"]["disable_parallel_tool_use"] is True


def test_openai_model_settings_reach_the_openai_request(alice_api, fake_anthropic):
    state = create(
        alice_api,
        model="openai/gpt-4o-mini",
        model_settings={"provider_type": "openai", "temperature": 0.1, "max_output_tokens": 3000},
    )

    assert state["llm_config"]["reasoning_effort"] == "high"
    body = model_request(alice_api, fake_anthropic, state["id"])
    assert body["temperature"] == 0.1
    assert body.get("max_completion_tokens", body.get("max_tokens")) == 3000  # a custom base URL: max_tokens


def test_max_tokens_null_clears_it_and_context_window_limit_is_exact(alice_api, fake_anthropic):
    state = create(alice_api, model=CLAUDE, max_tokens=5000)

    state = update(alice_api, state["id"], max_tokens=None, context_window_limit=1_000_000)

    assert state["llm_config"]["max_tokens"] is None
    assert state["llm_config"]["context_window"] == 1_000_000


def test_the_default_window_is_the_models_capped_at_128000(alice_api, fake_anthropic):
    assert create(alice_api, model=CLAUDE)["llm_config"]["context_window"] == 128_000
    assert create(alice_api, model="openai/gpt-4o-mini")["llm_config"]["context_window"] == 128_000
    assert create(alice_api, model="demo/echo-1")["llm_config"]["context_window"] == 32_000


def test_an_unknown_provider_type_is_a_422(alice_api):
    response = alice_api.post(
        "/v1/agents/", {"model": CLAUDE, "model_settings": {"provider_type": "moonshot"}}, format="json"
    )
    assert response.status_code == 422


def test_compaction_settings_merge_on_update_and_steer_compaction(alice_api, fake_anthropic):
    state = create(alice_api, model=CLAUDE, compaction_settings={"mode": "sliding_window", "prompt": "Short."})

    state = update(alice_api, state["id"], compaction_settings={"sliding_window_percentage": 0.5})
    assert state["compaction_settings"]["prompt"] == "Short."
    assert state["compaction_settings"]["sliding_window_percentage"] == 0.5
    state = update(alice_api, state["id"], compaction_settings={"mode": "all"})
    assert state["compaction_settings"]["mode"] == "all"
    assert state["compaction_settings"]["prompt"] is None  # a changed mode resets the prompt, as on Letta
    assert model_settings(agent_of(state)).compaction_evict_share == 1.0
    update(alice_api, state["id"], compaction_settings={"mode": "sliding_window", "sliding_window_percentage": 0.6})
    assert model_settings(agent_of(state)).compaction_evict_share == 0.6


def test_an_agent_without_compaction_settings_answers_null(alice_api):
    assert create(alice_api, model="demo/echo-1")["compaction_settings"] is None


def test_initial_message_sequence_given_is_stored_after_the_system_row(alice_api):
    state = create(
        alice_api,
        model="demo/echo-1",
        initial_message_sequence=[{"role": "user", "content": "Remember: blue."}],
    )

    rows = rows_of(state)
    assert [(r.role, r.content) for r in rows][1:] == [("user", [{"type": "text", "text": "Remember: blue."}])]
    assert len(state["message_ids"]) == 2


def test_without_initial_message_sequence_the_login_notice_stays(alice_api):
    assert [r.role for r in rows_of(create(alice_api, model="demo/echo-1"))] == ["system", "user"]
