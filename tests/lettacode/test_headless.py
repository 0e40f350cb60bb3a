"""Letta Code's headless mode (``letta -p``) against our server: answers, client-side Bash, resume."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.fake_llm.script import Reply

if TYPE_CHECKING:
    from tests.fake_llm.server import FakeLLMServer
    from tests.lettacode.client import LettaCode

pytestmark = [pytest.mark.live_server, pytest.mark.timeout(300)]


def agent_of(letta_code: LettaCode, agent_id: str) -> dict[str, Any]:
    with letta_code.api() as api:
        response = api.get(f"/v1/agents/{agent_id}")
    return dict(response.raise_for_status().json())


def test_a_new_user_in_headless_mode_gets_a_default_agent_and_an_answer(
    letta_code: LettaCode, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(Reply(text="Hello from the fake model."))

    run = letta_code.headless("Say hello")

    assert run.returncode == 0, run.stderr
    assert run.result["result"] == "Hello from the fake model."
    assert "origin:letta-code" in agent_of(letta_code, run.result["agent_id"])["tags"]


def test_headless_answers_a_prompt_on_the_agents_default_thread(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(Reply(text="Hello from the fake model."))

    run = letta_code.headless("Say hello", "--agent", agent_id, "--conv", "default")

    assert run.returncode == 0, run.stderr
    assert run.result["subtype"] == "success"
    assert run.result["result"] == "Hello from the fake model."
    assert run.result["conversation_id"] == "default"
    assert "Say hello" in fake_llm.requests[-1].body["messages"][-1]["content"][-1]["text"]


def test_headless_runs_bash_on_the_client_and_the_model_reads_its_output(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    command = "printf lc-probe > probe.txt && cat probe.txt"
    fake_llm.script(Reply(text="Running it.", tool_calls=[("Bash", {"command": command, "description": "probe"})]))

    run = letta_code.headless("Write the probe file", "--agent", agent_id, "--conv", "default")

    assert run.returncode == 0, run.stderr
    assert (letta_code.project / "probe.txt").read_text() == "lc-probe"
    assert [event["stop_reason"] for event in run.messages("stop_reason")] == ["requires_approval", "end_turn"]
    tool_results = [
        part
        for message in fake_llm.requests[-1].body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "tool_result"
    ]
    assert tool_results[-1]["content"] == "lc-probe"
    assert run.result["result"] == "Bash returned lc-probe."


def test_a_second_run_with_agent_resumes_the_same_agent_and_its_history(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    first = letta_code.headless("Remember the word tangerine", "--agent", agent_id, "--conv", "default")
    assert first.returncode == 0, first.stderr

    second = letta_code.headless("Which word did I give you?", "--agent", agent_id, "--conv", "default")

    assert second.returncode == 0, second.stderr
    assert second.result["agent_id"] == agent_id
    sent = str(fake_llm.requests[-1].body["messages"])
    assert "Remember the word tangerine" in sent
    assert "Which word did I give you?" in sent


def test_a_headless_run_with_agent_opens_a_conversation_of_that_agent(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(Reply(text="First."), Reply(text="Second."))

    first = letta_code.headless("One", "--agent", agent_id)
    second = letta_code.headless("Two", "--agent", agent_id)

    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert (first.result["result"], second.result["result"]) == ("First.", "Second.")
    conversations = {first.result["conversation_id"], second.result["conversation_id"]}
    assert len(conversations) == 2
    assert all(conversation.startswith("conv-") for conversation in conversations)
    assert {first.result["agent_id"], second.result["agent_id"]} == {agent_id}
    assert "One" not in str(fake_llm.requests[-1].body["messages"])  # each conversation its own history
