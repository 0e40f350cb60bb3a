"""A process keeps each agent's context window between turns, and never serves a stale one.

Another web process's turn, an edited row, a new system prompt or a reset all change what
the model must see next; each test makes one of these changes behind the cache's back and
reads the next model request off the fake model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.db import transaction

from agents import services
from agents.engine.store import MessageSnapshot
from agents.memory.window_cache import ContextWindows, WindowShape
from agents.models import Agent, Message, MessageRole, Run
from agents.runs.preview import agent_reset_messages
from tests.factories import MessageFactory
from tests.support.api import api_client

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer


def send(api: APIClient, agent: Agent, text: str) -> None:
    response = api.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": text}]}, format="json"
    )
    assert response.status_code == 200, response.content


@pytest.fixture
def say(cast: Cast, claude: Agent) -> Callable[[str], None]:
    """Send ``claude`` a message through its organization's API (the turn must answer 200)."""
    api = api_client(cast.org_a)
    return lambda text: send(api, claude, text)


def texts_sent(fake_llm: FakeLLMServer) -> list[str]:
    """The text parts of the last model request's messages, in order."""
    texts = []
    for message in fake_llm.last_request.body["messages"]:
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts += [part["text"] for part in parts if part.get("type") == "text"]
    return texts


@pytest.mark.django_db
def test_a_turn_sees_the_rows_another_process_appended_since_this_process_read_the_window(
    claude: Agent, say: Callable[[str], None], fake_llm: FakeLLMServer
) -> None:
    say("first")
    with transaction.atomic():
        seq = Agent.objects.hold(claude.pk).seqs.take(2)
    # What a turn served by another web process leaves behind.
    MessageFactory(agent=claude, seq=seq, role=MessageRole.USER, content=[{"type": "text", "text": "asked elsewhere"}])
    MessageFactory(
        agent=claude, seq=seq + 1, role=MessageRole.ASSISTANT, content=[{"type": "text", "text": "answered elsewhere"}]
    )

    say("second")

    texts = texts_sent(fake_llm)
    assert texts.index("first") < texts.index("asked elsewhere") < texts.index("answered elsewhere")
    assert texts[-1].endswith("second")


@pytest.mark.django_db
def test_a_row_edited_in_place_reaches_the_model_on_the_next_turn(
    claude: Agent, say: Callable[[str], None], fake_llm: FakeLLMServer
) -> None:
    say("first")
    say("second")  # its turn read "first" into the window
    [row] = [m for m in Message.objects.filter(agent=claude, role=MessageRole.USER) if m.content[0]["text"] == "first"]

    Message.objects.filter(pk=row.pk).update(content=[{"type": "text", "text": "first, as edited"}])
    say("third")

    texts = texts_sent(fake_llm)
    assert "first, as edited" in texts
    assert "first" not in texts


@pytest.mark.django_db
def test_a_new_system_prompt_reaches_the_model_on_the_next_turn(
    claude: Agent, say: Callable[[str], None], fake_llm: FakeLLMServer
) -> None:
    say("first")

    services.agent_update(agent=claude, system="You answer as a pirate would.")
    say("second")

    assert "You answer as a pirate would." in str(fake_llm.last_request.body["system"])


@pytest.mark.django_db
def test_after_a_reset_the_model_no_longer_sees_the_old_rows(
    claude: Agent, say: Callable[[str], None], fake_llm: FakeLLMServer
) -> None:
    say("before the reset")

    agent_reset_messages(agent=claude)
    say("after the reset")

    texts = texts_sent(fake_llm)
    assert "before the reset" not in texts
    assert texts[-1].endswith("after the reset")


@pytest.mark.django_db
def test_saving_a_whole_agent_keeps_the_revision_a_row_edit_bumped_meanwhile(cast: Cast, claude: Agent) -> None:
    loaded = Agent.objects.get(pk=claude.pk)
    Message.objects.filter(agent=claude).update(name="edited")

    loaded.description = "renamed while a row was edited"
    loaded.save()

    loaded.refresh_from_db()
    assert loaded.description == "renamed while a row was edited"
    assert loaded.context_revision == claude.context_revision + 1


def rows_of(*seqs: int) -> list[MessageSnapshot]:
    return [MessageSnapshot(id=seq, agent_id="a", seq=seq, role="user") for seq in seqs]


class RecordingFetch:
    def __init__(self, stored: int) -> None:
        self.stored = stored
        self.calls: list[tuple[int | None, int]] = []

    def __call__(self, after: int | None, through: int) -> list[MessageSnapshot]:
        self.calls.append((after, through))
        first = 0 if after is None else after + 1
        return rows_of(*range(first, min(through, self.stored) + 1))


SHAPE = WindowShape(start=0, summary=None, keep=None, revision=0)


def test_a_window_of_the_same_shape_reads_only_the_rows_after_the_last_one_read() -> None:
    windows, fetch = ContextWindows(capacity=4), RecordingFetch(stored=9)
    windows.rows("a", SHAPE, 9, fetch)
    fetch.stored = 11

    rows = windows.rows("a", SHAPE, 11, fetch)

    assert [row.seq for row in rows] == list(range(12))
    assert fetch.calls == [(None, 9), (9, 11)]


def test_a_window_nothing_was_added_to_is_served_without_a_read() -> None:
    windows, fetch = ContextWindows(capacity=4), RecordingFetch(stored=5)
    first = windows.rows("a", SHAPE, 5, fetch)

    again = windows.rows("a", SHAPE, 5, fetch)

    assert again == first
    assert fetch.calls == [(None, 5)]


@pytest.mark.parametrize(
    "changed",
    [
        {"start": 4},
        {"summary": 7, "keep": 3},
        {"revision": 1},
    ],
    ids=["reset", "compaction", "row-edited-in-place"],
)
def test_a_window_whose_shape_changed_is_read_again_whole(changed: dict[str, Any]) -> None:
    windows, fetch = ContextWindows(capacity=4), RecordingFetch(stored=9)
    windows.rows("a", SHAPE, 9, fetch)

    windows.rows("a", WindowShape(**{**SHAPE.__dict__, **changed}), 9, fetch)

    assert fetch.calls == [(None, 9), (None, 9)]


def test_a_window_whose_last_rows_were_removed_is_read_again_whole() -> None:
    windows, fetch = ContextWindows(capacity=4), RecordingFetch(stored=9)
    windows.rows("a", SHAPE, 9, fetch)

    rows = windows.rows("a", SHAPE, 6, fetch)

    assert [row.seq for row in rows] == list(range(7))
    assert fetch.calls == [(None, 9), (None, 6)]


def test_the_windows_of_the_agents_used_least_recently_are_dropped_past_the_capacity() -> None:
    windows, fetch = ContextWindows(capacity=2), RecordingFetch(stored=3)
    windows.rows("a", SHAPE, 3, fetch)
    windows.rows("b", SHAPE, 3, fetch)
    windows.rows("a", SHAPE, 3, fetch)  # "a" is used again: "b" is now the oldest
    windows.rows("c", SHAPE, 3, fetch)
    fetch.calls.clear()

    windows.rows("a", SHAPE, 3, fetch)
    windows.rows("b", SHAPE, 3, fetch)

    assert fetch.calls == [(None, 3)]  # only "b" had to be read again


@pytest.mark.django_db
def test_deleting_a_run_marks_its_agents_window_stale(cast: Cast, claude: Agent) -> None:
    api = api_client(cast.org_a)
    send(api, claude, "first")
    run = Run.objects.filter(agent=claude).latest("created_at")
    before = Agent.objects.get(pk=claude.pk).context_revision

    response = api.delete(f"/v1/runs/{run.public_id}")

    assert response.status_code == 200, response.content
    assert Agent.objects.get(pk=claude.pk).context_revision == before + 1
    assert not Message.objects.filter(agent=claude, run_id=run.pk).exists()
