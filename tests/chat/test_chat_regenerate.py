"""The calm transcript's server side: regenerate through the one run start, and what a chat row says
about who sent it, when, and how long the model reasoned."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from agents.chat import actions as chat
from agents.engine.completion import StepOutput
from agents.llm.base import ReasoningDelta, TextDelta
from agents.models import Message, MessageRole, Run, RunStatus
from tests.chat.test_chat_runs import queued_run
from tests.chat.test_consumer import pending_approval_rows
from tests.factories import RunFactory
from tests.support.sockets import finished, frames_until, open_chat

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]


async def say(communicator, text: str) -> list[dict]:
    await communicator.send_json_to({"type": "send", "text": text, "otid": "otid-1"})
    return await frames_until(communicator, finished)


def texts_by_role(agent) -> list[tuple[str, str]]:
    rows = Message.objects.filter(agent=agent, role__in=[MessageRole.USER, MessageRole.ASSISTANT]).order_by("seq")
    return [(row.role, "".join(p.get("text", "") for p in row.content if p.get("type") == "text")) for row in rows][1:]


async def test_regenerate_starts_a_new_run_of_the_last_input_and_keeps_the_earlier_answer(chat_app, cast, agent):
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)
    await say(communicator, "Hello there")

    await communicator.send_json_to({"type": "regenerate"})
    frames = await frames_until(communicator, finished)

    runs = await database_sync_to_async(lambda: list(Run.objects.filter(agent=agent).order_by("created_at")))()
    assert frames[0] == {
        "type": "accepted",
        "request": "regenerate",
        "run_ids": [runs[1].public_id],
        "runs": {runs[1].public_id: queued_run(runs[1].public_id)},
        "pending_approval": None,
    }
    assert frames[-1]["stop_reason"] == "end_turn"
    assert runs[1].created_by_id == cast.alice.pk and runs[1].status == RunStatus.COMPLETED
    rows = await database_sync_to_async(texts_by_role)(agent)
    answer = "I am the demo model, running offline without an API key. You said: “Hello there”."
    assert rows == [("user", "Hello there"), ("assistant", answer), ("user", "Hello there"), ("assistant", answer)]
    await communicator.disconnect()


async def test_regenerate_is_refused_while_a_run_is_active(chat_app, cast, agent):
    await database_sync_to_async(Message.objects.create)(
        organization=agent.organization, agent=agent, seq=2, role="user", content=[{"type": "text", "text": "hi"}]
    )
    await database_sync_to_async(RunFactory)(agent=agent, status=RunStatus.RUNNING, heartbeat_at=None)
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "regenerate"})
    error = await communicator.receive_json_from()

    assert error["type"] == "error" and error["request"] == "regenerate"
    assert "Another run is already in progress" in error["detail"]
    assert await database_sync_to_async(Run.objects.count)() == 1
    await communicator.disconnect()


async def test_regenerate_is_refused_while_an_approval_waits_for_a_person(chat_app, cast, agent):
    await database_sync_to_async(pending_approval_rows)(agent, "call_1")
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "regenerate"})
    error = await communicator.receive_json_from()

    assert error == {
        "type": "error",
        "request": "regenerate",
        "detail": "Answer the approval request first; then the answer can be regenerated.",
    }
    assert await database_sync_to_async(Run.objects.count)() == 0
    await communicator.disconnect()


async def test_regenerate_with_nothing_said_yet_is_an_error_frame(chat_app, cast, agent):
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "regenerate"})

    assert (await communicator.receive_json_from())["detail"] == "There is no message of yours to answer again."
    assert await database_sync_to_async(Run.objects.count)() == 0
    await communicator.disconnect()


async def test_chat_rows_say_who_sent_them_when_and_how_long_the_model_reasoned(chat_app, cast, agent):
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)
    frames = await say(communicator, "Hello there")

    rows = {f["row"]["role"]: f["row"] for f in frames if f["type"] == "message"}
    stored = await database_sync_to_async(lambda: chat.chat_sync(agent=agent, after_seq=1)["rows"])()
    assert rows["user"]["sender"] == {"user": cast.alice.email}
    assert rows["assistant"]["sender"] is None
    assert isinstance(rows["assistant"]["reasoning_ms"], int) and rows["assistant"]["reasoning_ms"] >= 0
    assert rows["user"]["reasoning_ms"] is None
    assert rows["user"]["created_at"].endswith("Z")
    assert [entry["row"] for entry in stored] == [rows["user"], rows["assistant"]]
    await communicator.disconnect()


def test_a_step_measures_its_reasoning_from_the_first_delta_to_the_last(monkeypatch):
    clock = iter([10.0, 11.2, 13.5])
    monkeypatch.setattr("agents.engine.completion.time.monotonic", lambda: next(clock))
    out = StepOutput(message_id="m")
    assert out.reasoning_ms is None

    for event in (ReasoningDelta("Let me"), ReasoningDelta(" think"), TextDelta("Hi"), ReasoningDelta(" more")):
        out.absorb(event, {})

    assert out.reasoning_ms == 3500
