"""Turns driven through the chat's WebSocket, executed in-process with the demo model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from agents.chat import actions as chat
from agents.models import Message, Run, RunStatus
from tests.factories import AgentFactory, MessageFactory, RunFactory, ToolFactory
from tests.support.sockets import finished, frames_until, open_chat
from tools.models import AgentTool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

SECRET_CODE = """def get_secret_code(input_text: str) -> str:
    \"\"\"Return the secret code for a text.

    Args:
        input_text: The text.
    \"\"\"
    return "SECRET-" + input_text.upper()
"""
ROLL_DICE = """def roll_dice(num_sides: int) -> str:
    \"\"\"Roll a die.

    Args:
        num_sides: How many sides.
    \"\"\"
    return str(num_sides)
"""


def queued_run(run_id: str) -> dict[str, Any]:
    """A run just accepted, as the chat shows it (``agents.wire.chat.chat_run``)."""
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "step_count": 0, "estimated": False}
    return {
        "id": run_id,
        "status": "queued",
        "stop_reason": None,
        "error": None,
        "usage": usage,
        "active": True,
        "banner": None,
        "unsaved_note": None,
    }


def source_tool(organization, source: str, *, gated: bool = False):
    from tools.schema import derive_tool_schema

    schema = derive_tool_schema(source)
    return ToolFactory(
        organization=organization,
        name=schema["name"],
        description=schema["description"],
        source_code=source,
        json_schema=schema,
        default_requires_approval=gated,
    )


@pytest.fixture
def agent(cast):
    agent = AgentFactory(organization=cast.org_a, name="Chat")
    for tool in (source_tool(cast.org_a, ROLL_DICE), source_tool(cast.org_a, SECRET_CODE, gated=True)):
        AgentTool.objects.create(agent=agent, tool=tool)
    return agent


async def tab(chat_app, cast, agent, user=None):
    communicator, connected, _ = await open_chat(chat_app, user or cast.alice, agent, organization=cast.org_a)
    assert connected
    await communicator.send_json_to({"type": "resume", "after_seq": 1})
    sync = await communicator.receive_json_from()
    assert sync["type"] == "sync"
    return communicator, sync


async def say(communicator, text: str, otid: str = "") -> list[dict]:
    await communicator.send_json_to({"type": "send", "text": text, "otid": otid})
    return await frames_until(communicator, finished)


def rebuild(frames: list[dict], start: list[dict] = ()) -> dict[int, list[dict]]:
    """The transcript a tab holds: rows by seq, from a sync and then the events, the last version winning."""
    rows = {entry["row"]["seq"]: entry["messages"] for entry in start}
    for frame in frames:
        if frame["type"] == "message":
            rows[frame["row"]["seq"]] = frame["messages"]
        if frame["type"] == "sync":
            rows |= {entry["row"]["seq"]: entry["messages"] for entry in frame["rows"]}
    return rows


@database_sync_to_async
def stored_transcript(agent) -> dict[int, list[dict]]:
    page = chat.chat_sync(agent=agent, after_seq=1, limit=10_000)
    return {entry["row"]["seq"]: json.loads(json.dumps(entry["messages"])) for entry in page["rows"]}


async def test_a_sent_message_streams_a_turn_that_every_tab_of_the_agent_receives(chat_app, cast, agent):
    alice, _ = await tab(chat_app, cast, agent)
    bob, _ = await tab(chat_app, cast, agent, user=cast.bob)

    frames = await say(alice, "Hello there", otid="otid-1")
    seen_by_bob = await frames_until(bob, finished)

    accepted = frames[0]
    run = await database_sync_to_async(Run.objects.get)()
    events = frames[1:]
    streamed = "".join(f["text"] for f in events if f["type"] == "text_delta")
    assistant = await database_sync_to_async(Message.objects.get)(agent=agent, role="assistant")
    assert accepted == {
        "type": "accepted",
        "request": "send",
        "run_ids": [run.public_id],
        "otid": "otid-1",
        "runs": {run.public_id: queued_run(run.public_id)},
        "pending_approval": None,
    }
    assert seen_by_bob == events
    assert [f["seq"] for f in events] == sorted({f["seq"] for f in events})
    assert events[0]["type"] == "message"
    assert events[0]["messages"][0]["content"] == "Hello there"
    assert events[0]["messages"][0]["otid"] == "otid-1"
    assert any(f["type"] == "reasoning_delta" for f in events)
    assert streamed == assistant.content[-1]["text"]
    assert "You said: “Hello there”" in streamed
    assert events[-1]["stop_reason"] == "end_turn"
    assert events[-1]["usage"]["total_tokens"] > 0
    assert run.status == RunStatus.COMPLETED
    assert run.created_by_id == cast.alice.pk
    assert run.background is True
    await alice.disconnect()
    await bob.disconnect()


async def test_the_transcript_rebuilt_from_the_events_equals_the_transcript_loaded_from_the_database(
    chat_app, cast, agent
):
    communicator, sync = await tab(chat_app, cast, agent)

    frames = await say(communicator, "Hi")
    frames += await say(communicator, "call roll_dice with num_sides=6")
    frames += await say(communicator, "call get_secret_code with input_text=hello")
    pending = next(
        m
        for f in frames
        if f["type"] == "message"
        for m in f["messages"]
        if m["message_type"] == "approval_request_message"
    )
    await communicator.send_json_to(
        {
            "type": "approve",
            "approvals": [{"type": "approval", "tool_call_id": pending["tool_call"]["tool_call_id"], "approve": True}],
        }
    )
    frames += await frames_until(communicator, finished)

    assert [f["stop_reason"] for f in frames if f["type"] == "run_finished"] == [
        "end_turn",
        "end_turn",
        "requires_approval",
        "end_turn",
    ]
    assert rebuild(frames, sync["rows"]) == await stored_transcript(agent)
    await communicator.disconnect()


async def test_a_parallel_batch_is_answered_in_one_submission_with_approve_deny_and_a_provided_result(
    chat_app, cast, agent
):
    communicator, _ = await tab(chat_app, cast, agent)
    frames = await say(
        communicator,
        "call get_secret_code with input_text=alpha and call get_secret_code with input_text=beta "
        "and call get_secret_code with input_text=gamma",
    )
    request = frames[-2]["messages"][-1]
    first, second, third = (call["tool_call_id"] for call in request["tool_calls"])

    await communicator.send_json_to(
        {
            "type": "approve",
            "approvals": [
                {"type": "approval", "tool_call_id": first, "approve": True},
                {"type": "approval", "tool_call_id": second, "approve": False, "reason": "not beta"},
                {"type": "tool", "tool_call_id": third, "tool_return": "GAMMA-BY-HAND", "status": "success"},
            ],
        }
    )
    answer = await frames_until(communicator, finished)

    assert request["message_type"] == "approval_request_message"
    assert frames[-1]["stop_reason"] == "requires_approval"
    assert answer[0]["type"] == "accepted"
    assert answer[-1]["stop_reason"] == "end_turn"
    approval_row = await database_sync_to_async(Message.objects.get)(agent=agent, role="approval")
    tool_row = await database_sync_to_async(Message.objects.get)(agent=agent, role="tool")
    assert approval_row.sender_user_id == cast.alice.pk
    assert [(a["type"], a.get("approve")) for a in approval_row.approvals] == [
        ("approval", True),
        ("approval", False),
        ("tool", None),
    ]
    returns = {r["tool_call_id"]: r for r in tool_row.tool_returns}
    assert returns[first]["status"] == "success"
    assert returns[first]["tool_return"] == "SECRET-ALPHA"
    assert returns[second]["status"] == "error"
    assert "not beta" in returns[second]["tool_return"]
    assert returns[third]["tool_return"] == "GAMMA-BY-HAND"
    final = await database_sync_to_async(lambda: Message.objects.filter(agent=agent).last())()
    assert "SECRET-ALPHA" in final.content[-1]["text"]
    assert "not beta" in final.content[-1]["text"]
    assert "GAMMA-BY-HAND" in final.content[-1]["text"]
    await communicator.disconnect()


async def test_max_steps_stops_the_turn_and_continue_steps_again(chat_app, cast, agent):
    await database_sync_to_async(type(agent).objects.filter(pk=agent.pk).update)(max_steps=1)
    communicator, _ = await tab(chat_app, cast, agent)

    first = await say(communicator, "call roll_dice with num_sides=4")
    await communicator.send_json_to({"type": "continue"})
    second = await frames_until(communicator, finished)

    assert first[-1]["stop_reason"] == "max_steps"
    assert second[0]["request"] == "continue"
    assert second[-1]["stop_reason"] == "end_turn"
    final = await database_sync_to_async(lambda: Message.objects.filter(agent=agent).last())()
    assert final.role == "assistant"
    assert "roll_dice returned 4" in final.content[-1]["text"]
    assert await database_sync_to_async(Run.objects.count)() == 2
    await communicator.disconnect()


async def test_retry_continues_a_failed_run_from_its_stored_input_without_storing_it_twice(chat_app, cast, agent):
    failed = await database_sync_to_async(RunFactory)(
        agent=agent,
        status=RunStatus.FAILED,
        stop_reason="llm_api_error",
        request={"messages": [{"role": "user", "content": "Are you there?", "otid": "o-9"}]},
    )
    await database_sync_to_async(MessageFactory)(
        agent=agent, seq=2, run=failed, otid="o-9", content=[{"type": "text", "text": "Are you there?"}]
    )
    communicator, _ = await tab(chat_app, cast, agent)

    await communicator.send_json_to({"type": "retry"})
    frames = await frames_until(communicator, finished)

    assert frames[0]["request"] == "retry"
    assert frames[-1]["stop_reason"] == "end_turn"
    rows = await database_sync_to_async(lambda: list(Message.objects.filter(agent=agent, seq__gte=2)))()
    assert [row.role for row in rows] == ["user", "assistant"]
    assert "Are you there?" in rows[-1].content[-1]["text"]
    await communicator.disconnect()


async def test_retry_sends_again_a_run_that_failed_before_storing_anything(chat_app, cast, agent):
    await database_sync_to_async(RunFactory)(
        agent=agent,
        status=RunStatus.FAILED,
        stop_reason="error",
        request={"messages": [{"role": "user", "content": "First try", "otid": "o-10"}], "stream_tokens": True},
    )
    communicator, _ = await tab(chat_app, cast, agent)

    await communicator.send_json_to({"type": "retry"})
    frames = await frames_until(communicator, finished)

    assert frames[-1]["stop_reason"] == "end_turn"
    user_rows = await database_sync_to_async(lambda: list(Message.objects.filter(agent=agent, otid="o-10")))()
    assert len(user_rows) == 1
    assert user_rows[0].content == [{"type": "text", "text": "First try"}]
    await communicator.disconnect()


async def test_stop_cancels_a_streaming_run_on_the_server(chat_app, settings, cast, agent):
    settings.DEMO_TOKEN_DELAY = 0.05
    communicator, _ = await tab(chat_app, cast, agent)

    await communicator.send_json_to({"type": "send", "text": "a long message " * 10, "otid": ""})
    await frames_until(communicator, lambda f: f["type"] == "text_delta")
    await communicator.send_json_to({"type": "cancel"})
    frames = await frames_until(communicator, finished)

    run = await database_sync_to_async(Run.objects.get)()
    assert frames[-1]["stop_reason"] == "cancelled"
    [accepted] = [f for f in frames if f["type"] == "accepted"]
    assert {key: accepted[key] for key in ("request", "run_ids", "pending_approval")} == {
        "request": "cancel",
        "run_ids": [run.public_id],
        "pending_approval": None,
    }
    assert list(accepted["runs"]) == [run.public_id]  # asked to stop: still running, or cancelled already
    assert run.status == RunStatus.CANCELLED
    assert run.cancel_requested_at is not None
    assert not await database_sync_to_async(Message.objects.filter(agent=agent, role="assistant").exists)()
    agent_row = await database_sync_to_async(type(agent).objects.get)(pk=agent.pk)
    assert agent_row.turn_lock_run_id is None
    await communicator.disconnect()


async def test_a_tab_that_joins_mid_run_resumes_with_nothing_lost_and_nothing_doubled(chat_app, settings, cast, agent):
    settings.DEMO_TOKEN_DELAY = 0.02
    first, _ = await tab(chat_app, cast, agent)
    await first.send_json_to({"type": "send", "text": "call roll_dice with num_sides=3", "otid": ""})
    await frames_until(first, lambda f: f["type"] == "message" and f["row"]["role"] == "assistant")

    late, sync = await tab(chat_app, cast, agent, user=cast.bob)
    late_frames = await frames_until(late, finished)
    await frames_until(first, finished)

    assert sync["run"]["active"] is True
    assert [entry["row"]["role"] for entry in sync["rows"]][:2] == ["user", "assistant"]
    transcript = rebuild(late_frames, sync["rows"])
    assert transcript == await stored_transcript(agent)
    message_seqs = [f["row"]["seq"] for f in late_frames if f["type"] == "message"]
    assert len(message_seqs) == len(set(message_seqs))
    await first.disconnect()
    await late.disconnect()
