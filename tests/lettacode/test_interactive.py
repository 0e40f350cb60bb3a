"""Letta Code's TUI in a pty, in standard permission mode: a new user's first agent, and approvals.

The approval dialog lists "1. Yes", "2. Yes, and don't ask again…", "3. No, and tell Letta
Code what to do differently"; Esc dismisses it, and the next message then carries the denial
and the new text in one request (``approval`` then ``message``), which the server must accept.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import pytest

from tests.fake_llm.script import Reply
from tests.lettacode.client import APPROVAL, ask
from tests.lettacode.terminal import DOWN, ENTER, ESC

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.lettacode.client import LettaCode
    from tests.lettacode.terminal import Terminal

pytestmark = [pytest.mark.live_server, pytest.mark.timeout(300)]

STANDARD = ("--permission-mode", "standard")


def bash_call(command: str) -> Reply:
    return Reply(text="Running it.", tool_calls=[("Bash", {"command": command, "description": "make the probe"})])


def tool_results(fake_llm: FakeLLMServer) -> list[dict[str, Any]]:
    """The ``tool_result`` parts of the last model request, in order."""
    return [
        part
        for message in fake_llm.requests[-1].body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "tool_result"
    ]


def last_user_text(fake_llm: FakeLLMServer) -> str:
    content = fake_llm.requests[-1].body["messages"][-1]["content"]
    return " ".join(part.get("text", "") for part in content if part.get("type") == "text")


@contextlib.contextmanager
def at_approval(letta_code: LettaCode, agent_id: str) -> Iterator[Terminal]:
    """A standard-mode session of ``agent_id`` whose model has just asked to run a Bash call."""
    with letta_code.open_session("--agent", agent_id, *STANDARD) as screen:
        ask(screen, "Make the probe file")
        screen.expect(APPROVAL)
        yield screen


def wait_for_answer(screen: Terminal, text: str) -> None:
    screen.expect(text, timeout=60)
    screen.settle()


def test_a_new_user_gets_a_default_agent_that_answers(letta_code: LettaCode, fake_llm: FakeLLMServer) -> None:
    fake_llm.script(Reply(text="Hello, new user."))

    with letta_code.open_session() as screen:
        ask(screen, "Hi there")
        wait_for_answer(screen, "Hello, new user.")

    agent_id = letta_code.settings()["lastAgent"]
    with letta_code.api() as api:
        agent = api.get(f"/v1/agents/{agent_id}").json()
    assert "origin:letta-code" in agent["tags"]
    assert agent["model"].startswith("anthropic/")
    assert {"web_search", "fetch_webpage"} <= {tool["name"] for tool in agent["tools"]}
    assert "Hi there" in last_user_text(fake_llm)


def test_approving_a_bash_call_runs_it_on_the_client(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(bash_call("printf approved > probe.txt && cat probe.txt"))

    with at_approval(letta_code, agent_id) as screen:
        screen.send(ENTER)
        wait_for_answer(screen, "Bash returned approved")

    assert (letta_code.project / "probe.txt").read_text() == "approved"
    assert tool_results(fake_llm)[-1]["content"] == "approved"


def test_denying_a_bash_call_with_a_reason_gives_the_model_the_reason(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(bash_call("touch denied.txt"))

    with at_approval(letta_code, agent_id) as screen:
        screen.settle()
        screen.send(DOWN)
        screen.expect("\u276f 2\\.")  # the dialog's cursor, one key at a time on a busy machine
        screen.send(DOWN)
        screen.expect("Type reason")  # option 3 takes the reason as soon as it is highlighted
        screen.type("use another name")
        screen.send(ENTER)
        wait_for_answer(screen, "was denied")

    assert not (letta_code.project / "denied.txt").exists()
    denial = tool_results(fake_llm)[-1]
    assert denial["is_error"] is True
    assert "use another name" in denial["content"]


def test_esc_at_an_approval_then_a_new_message_is_answered(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(bash_call("touch cancelled.txt"), Reply(text="Fine, something else then."))

    with at_approval(letta_code, agent_id) as screen:
        screen.settle()
        screen.send(ESC, pause=1.0)
        screen.expect("Approval cancelled")
        screen.settle()
        ask(screen, "hello again")
        wait_for_answer(screen, "Fine, something else then.")
        ask(screen, "and once more")
        wait_for_answer(screen, "You said")

    assert not (letta_code.project / "cancelled.txt").exists()
    cancelled = [part for part in tool_results(fake_llm) if "User cancelled the approval" in str(part["content"])]
    assert cancelled, tool_results(fake_llm)
    sent = str(fake_llm.requests[-2].body["messages"][-1])
    assert "User cancelled the approval" in sent
    assert "hello again" in sent


def test_starting_again_with_agent_resumes_its_conversation(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(Reply(text="Noted: tangerine."))
    with letta_code.open_session("--agent", agent_id) as screen:
        ask(screen, "Remember the word tangerine")
        wait_for_answer(screen, "Noted: tangerine.")

    fake_llm.script(Reply(text="The word was tangerine."))
    with letta_code.open_session("--agent", agent_id) as screen:
        assert "Remember the word tangerine" in screen.text()  # the history is drawn again
        ask(screen, "Which word?")
        wait_for_answer(screen, "The word was tangerine.")

    assert "Remember the word tangerine" in str(fake_llm.requests[-1].body["messages"])


def test_an_approval_left_open_when_letta_code_quits_is_asked_again_on_restart(
    letta_code: LettaCode, agent_id: str, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script(bash_call("printf later > later.txt && cat later.txt"))
    with at_approval(letta_code, agent_id):
        pass  # Letta Code quits with the approval open

    with letta_code.terminal("--agent", agent_id, *STANDARD) as screen:
        screen.expect(APPROVAL, timeout=90)
        screen.send(ENTER)
        wait_for_answer(screen, "Bash returned later")

    assert (letta_code.project / "later.txt").read_text() == "later"
