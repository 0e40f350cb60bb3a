"""What the chat's payloads say, so the page only renders: memory-edit notes and summaries on rows,
each run's state and banner, and, once a run ends, the memory panel and the context meter."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.test import Client
from django.urls import reverse

from agents.broadcast import RunAnnouncer, agent_group, event_payload
from agents.chat import actions as chat
from agents.engine.compaction import summary_content
from agents.engine.events import MessageEvent, RunFinishedEvent, TurnUsage
from agents.engine.stop import StopReason
from agents.memory.notes import edited_label
from agents.models import Agent, Message, RunStatus
from agents.wire.chat import run_banner
from tests.conftest import Cast
from tests.factories import MessageFactory, RunFactory
from tests.support.sockets import IN_MEMORY_LAYER

pytestmark = pytest.mark.django_db


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def result(call_id: str, name: str, status: str = "success") -> dict[str, Any]:
    return {"tool_call_id": call_id, "name": name, "status": status, "tool_return": "ok", "func_response": "ok"}


def tool_turn(agent: Agent, calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> Message:
    MessageFactory(agent=agent, role="assistant", content=[], tool_calls=calls)
    return MessageFactory(agent=agent, role="tool", content=[], tool_returns=results)


def row_of(page: dict[str, Any], message: Message) -> dict[str, Any]:
    return next(entry["row"] for entry in page["rows"] if entry["row"]["id"] == message.public_id)


def test_a_tool_row_carries_the_notes_of_the_memory_edits_its_calls_made(agent: Agent):
    calls = [
        call("c1", "memory_insert", {"label": "human", "new_str": "Likes tea."}),
        call("c2", "memory_replace", {"label": "human", "old_str": "a", "new_str": "b"}),
        call("c3", "memory", {"command": "create", "path": "/memories/todo/"}),
        call("c4", "memory_rethink", {"label": "persona", "new_memory": "x"}),
        call("c5", "roll_dice", {"label": "not memory"}),
    ]
    results = [
        result("c1", "memory_insert"),
        result("c2", "memory_replace"),
        result("c3", "memory"),
        result("c4", "memory_rethink", status="error"),  # refused: nothing was edited
        result("c5", "roll_dice"),
    ]
    tool_row = tool_turn(agent, calls, results)

    page = chat.chat_history(agent=agent)

    assert row_of(page, tool_row)["memory_edits"] == [
        {"label": "human", "note": "Memory updated: human"},
        {"label": "todo", "note": "Memory updated: todo"},
    ]
    assert all(entry["row"]["memory_edits"] == [] for entry in page["rows"] if entry["row"]["role"] != "tool")


def test_the_note_is_there_when_the_call_it_answers_is_on_an_older_page(agent: Agent):
    tool_row = tool_turn(agent, [call("c1", "core_memory_append", {"label": "human", "content": "x"})], [])
    Message.objects.filter(pk=tool_row.pk).update(tool_returns=[result("c1", "core_memory_append")])

    page = chat.chat_history(agent=agent, limit=1)
    sync = chat.chat_sync(agent=agent, after_seq=tool_row.seq - 1)

    assert [entry["row"]["id"] for entry in page["rows"]] == [tool_row.public_id]
    assert row_of(page, tool_row)["memory_edits"] == [{"label": "human", "note": "Memory updated: human"}]
    assert row_of(sync, tool_row)["memory_edits"] == [{"label": "human", "note": "Memory updated: human"}]


@pytest.mark.django_db(transaction=True)
async def test_the_live_event_of_a_tool_row_carries_the_same_notes(agent: Agent, settings):
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER
    calls = [call("c1", "memory_insert", {"label": "human", "new_str": "x"})]
    tool_row = await database_sync_to_async(tool_turn)(agent, calls, [result("c1", "memory_insert")])
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(agent_group(agent.pk), channel)

    async with RunAnnouncer(run_id=None, agent_id=agent.pk) as announcer:
        await announcer.announce(MessageEvent(run_id=None, seq=1, message=tool_row.snapshot()))
    [payload] = (await layer.receive(channel))["events"]

    assert payload["row"]["memory_edits"] == [{"label": "human", "note": "Memory updated: human"}]


@pytest.mark.parametrize(
    ("arguments", "label"),
    [
        ({"label": "human"}, "human"),
        ({"command": "rename", "old_path": "/memories/a", "new_path": "/memories/b/"}, "b"),
        ({"command": "str_replace", "path": "/memories/notes"}, "notes"),
        ({}, None),
        ("not json", None),
    ],
)
def test_the_label_a_memory_call_edits(arguments: Any, label: str | None):
    assert edited_label(arguments if isinstance(arguments, str) else json.dumps(arguments)) == label


def test_a_summary_row_carries_its_summary(agent: Agent):
    row = MessageFactory(
        agent=agent,
        content=[{"type": "text", "text": summary_content("Alice likes owls.\nAnd tea.")}],
        metadata={"kind": "summary"},
    )

    entry = row_of(chat.chat_history(agent=agent), row)

    assert entry["kind"] == "summary"
    assert entry["summary"] == "Alice likes owls.\nAnd tea."


@pytest.mark.parametrize(
    ("status", "stop_reason", "error", "banner"),
    [
        ("failed", "error", "The model is away.", ("error", "The run failed: The model is away.", "retry")),
        ("failed", "llm_api_error", None, ("error", "The run failed: llm_api_error", "retry")),
        ("completed", "max_steps", None, ("info", "The agent reached its step limit for this turn.", "continue")),
        ("cancelled", "cancelled", None, ("info", "Stopped.", None)),
        ("completed", "end_turn", None, None),
        ("completed", "requires_approval", None, None),
        ("running", None, None, None),
        ("queued", None, None, None),
    ],
)
def test_a_runs_banner_is_decided_by_the_server(status, stop_reason, error, banner):
    decided = run_banner(status=status, stop_reason=stop_reason, error=error)

    assert (decided and (decided["kind"], decided["text"], decided["action"])) == banner


def test_each_run_summary_says_whether_it_works_and_what_its_end_means(agent: Agent):
    cancelled = RunFactory(agent=agent, status=RunStatus.CANCELLED, stop_reason="cancelled")
    running = RunFactory(agent=agent, status=RunStatus.RUNNING)

    summaries = {run.public_id: chat.run_summary(run) for run in (cancelled, running)}

    assert summaries[cancelled.public_id]["active"] is False
    assert summaries[cancelled.public_id]["banner"] == {"kind": "info", "text": "Stopped.", "action": None}
    assert summaries[cancelled.public_id]["unsaved_note"] == (
        "Stopped before this message was finished; it was not saved."
    )
    assert summaries[running.public_id]["active"] is True
    assert summaries[running.public_id]["banner"] is None
    assert summaries[running.public_id]["unsaved_note"] is None


def test_the_run_finished_payload_carries_the_run_as_the_chat_shows_it(agent: Agent):
    run = RunFactory(agent=agent, status=RunStatus.FAILED, stop_reason="error")
    finished = RunFinishedEvent(
        run_id=run.pk, seq=9, stop_reason=StopReason.ERROR, usage=TurnUsage(prompt_tokens=3), error="boom"
    )

    payload = event_payload(finished)

    assert payload["run"]["id"] == run.public_id
    assert payload["run"]["active"] is False
    assert payload["run"]["usage"]["prompt_tokens"] == 3
    assert payload["run"]["banner"] == {"kind": "error", "text": "The run failed: boom", "action": "retry"}


def test_an_approval_rows_event_says_no_request_waits_any_more(agent: Agent):
    row = MessageFactory(agent=agent, role="approval", content=[], approvals=[])

    payload = event_payload(MessageEvent(run_id=None, seq=1, message=row.snapshot()))

    assert payload["pending_approval"] is None


def test_the_memory_endpoint_and_a_runs_end_give_the_panel_the_same_state(
    client: Client, cast: Cast, agent: Agent, django_capture_on_commit_callbacks, monkeypatch
):
    published: list[dict[str, Any]] = []

    async def capture(agent_id: Any, payloads: list[dict[str, Any]]) -> None:
        published.extend(payloads)

    monkeypatch.setattr("agents.broadcast.publish", capture)
    run = RunFactory(agent=agent, status=RunStatus.QUEUED)
    client.force_login(cast.alice)

    with django_capture_on_commit_callbacks(execute=True):
        chat.chat_cancel(agent=agent)
    state = client.get(reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id})).json()

    [ended] = published
    assert ended["run_id"] == run.public_id
    assert ended["memory"] == state["memory"]
    assert ended["context"] == state["context"]
    assert 0 < ended["context"]["current"] < ended["context"]["max"] == agent.context_window
