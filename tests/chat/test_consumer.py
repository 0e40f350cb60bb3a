from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from accounts.models import Membership, User
from agents.broadcast import publish
from agents.chat.consumers import SERVER_FAULT
from agents.errors import AgentBusy
from agents.models import Message, Run, RunStatus
from tests.factories import AgentFactory, MessageFactory, RunFactory, asking_for_approval
from tests.support.sockets import finished, frames_until, open_chat

pytestmark = pytest.mark.django_db(transaction=True)


def pending_approval_rows(agent, *call_ids: str) -> None:
    """The agent's last row asks for approval of ``call_ids``."""
    asking_for_approval(agent, *call_ids, said="Calling get_secret_code.")


async def test_it_rejects_anonymous_sockets(chat_app, agent):
    _, connected, code = await open_chat(chat_app, AnonymousUser(), agent)

    assert connected is False
    assert code == 4401


async def test_it_rejects_other_org(chat_app, cast, agent):
    _, connected, code = await open_chat(chat_app, cast.charlie, agent, organization=cast.org_b)

    assert connected is False
    assert code == 4404


async def test_it_rejects_an_agent_of_an_organization_the_session_does_not_act_for(chat_app, cast):
    foreign = await database_sync_to_async(AgentFactory)(organization=cast.org_b)

    _, connected, code = await open_chat(chat_app, cast.alice, foreign, organization=cast.org_b)

    assert connected is False
    assert code == 4404


async def test_it_accepts_a_member_of_the_agent_organization(chat_app, cast, agent):
    communicator, connected, _ = await open_chat(chat_app, cast.bob, agent, organization=cast.org_a)

    assert connected is True
    await communicator.disconnect()


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("not json", "A frame must be valid JSON."),
        ("[1, 2]", "A frame must be a JSON object."),
        ('{"type": "shout"}', "Unknown frame type 'shout'"),
        ('{"text": "hi"}', "Unknown frame type None"),
        ('{"type": "send"}', "Invalid send frame: text: Field required."),
        ('{"type": "send", "text": ""}', "Invalid send frame: text: String should have at least 1 character."),
        ('{"type": "send", "text": "hi", "admin": true}', "Invalid send frame: admin: Extra inputs are not permitted."),
        ('{"type": "resume", "after_seq": "x"}', "Invalid resume frame: after_seq"),
        ('{"type": "approve", "approvals": []}', "Invalid approve frame: approvals"),
        ('{"type": "approve", "approvals": [{"type": "approval", "tool_call_id": "c1"}]}', "approve: Field required"),
    ],
)
async def test_it_answers_a_malformed_frame_with_an_error_frame_and_stays_open(chat_app, cast, agent, raw, detail):
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_to(text_data=raw)
    error = await communicator.receive_json_from()
    await communicator.send_json_to({"type": "resume", "after_seq": 0})
    sync = await communicator.receive_json_from()

    assert error["type"] == "error"
    assert detail in error["detail"]
    assert sync["type"] == "sync"
    assert await database_sync_to_async(Run.objects.count)() == 0
    await communicator.disconnect()


async def test_it_answers_a_binary_frame_with_an_error_frame(chat_app, cast, agent):
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_to(bytes_data=b"\x00\x01")

    assert await communicator.receive_json_from() == {
        "type": "error",
        "detail": "Frames are JSON text, not binary.",
        "request": None,
    }
    await communicator.disconnect()


async def test_resume_sends_the_rows_after_a_sequence_id_and_the_latest_run(chat_app, cast, agent):
    await database_sync_to_async(MessageFactory)(agent=agent, seq=2, content=[{"type": "text", "text": "two"}])
    await database_sync_to_async(MessageFactory)(agent=agent, seq=3, content=[{"type": "text", "text": "three"}])
    run = await database_sync_to_async(RunFactory)(agent=agent, status=RunStatus.FAILED, stop_reason="error")
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "resume", "after_seq": 2})
    sync = await communicator.receive_json_from()

    assert sync["type"] == "sync"
    assert [entry["row"]["seq"] for entry in sync["rows"]] == [3]
    assert sync["rows"][0]["messages"][0]["content"] == "three"
    assert sync["has_more"] is False
    assert sync["run"]["id"] == run.public_id
    assert sync["run"]["status"] == "failed"
    assert sync["run"]["active"] is False
    await communicator.disconnect()


async def test_a_message_while_approval_is_pending_is_an_error_frame_and_queues_nothing(chat_app, cast, agent):
    await database_sync_to_async(pending_approval_rows)(agent, "call_1")
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "send", "text": "hello", "otid": "o-1"})
    error = await communicator.receive_json_from()

    assert error["type"] == "error"
    assert error["request"] == "send"
    assert "Please approve or deny the pending request before continuing" in error["detail"]
    assert await database_sync_to_async(Run.objects.count)() == 0
    assert await database_sync_to_async(Message.objects.filter(agent=agent).count)() == 4
    await communicator.disconnect()


async def test_approvals_that_do_not_match_the_pending_calls_are_an_error_frame(chat_app, cast, agent):
    await database_sync_to_async(pending_approval_rows)(agent, "call_1", "call_2")
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to(
        {"type": "approve", "approvals": [{"type": "approval", "tool_call_id": "call_1", "approve": True}]}
    )
    error = await communicator.receive_json_from()

    assert error["type"] == "error"
    assert error["request"] == "approve"
    assert error["detail"].startswith("Invalid tool call IDs.")
    assert await database_sync_to_async(Run.objects.count)() == 0
    await communicator.disconnect()


async def test_an_approval_with_nothing_pending_is_an_error_frame(chat_app, cast, agent):
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to(
        {"type": "approve", "approvals": [{"type": "approval", "tool_call_id": "call_1", "approve": False}]}
    )
    error = await communicator.receive_json_from()

    assert "No tool call is currently awaiting approval" in error["detail"]
    await communicator.disconnect()


async def test_it_refuses_to_start_a_run_while_another_is_active(chat_app, cast, agent):
    await database_sync_to_async(RunFactory)(agent=agent, status=RunStatus.RUNNING, heartbeat_at=None)
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "send", "text": "hello", "otid": "o-1"})
    error = await communicator.receive_json_from()

    assert error["type"] == "error"
    assert "Another run is already in progress" in error["detail"]
    assert await database_sync_to_async(Run.objects.count)() == 1
    await communicator.disconnect()


async def test_retry_without_a_failed_run_is_an_error_frame(chat_app, cast, agent):
    await database_sync_to_async(RunFactory)(agent=agent, status=RunStatus.COMPLETED, stop_reason="end_turn")
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "retry"})

    assert (await communicator.receive_json_from())["detail"] == "There is no failed run to retry."
    await communicator.disconnect()


async def test_cancel_ends_a_run_that_has_not_started_and_tells_every_tab(chat_app, cast, agent):
    run = await database_sync_to_async(RunFactory)(agent=agent, status=RunStatus.QUEUED)
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)
    other_tab, _, _ = await open_chat(chat_app, cast.bob, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "cancel"})
    frames = await frames_until(communicator, finished)
    seen_by_other_tab = await other_tab.receive_json_from()

    await database_sync_to_async(run.refresh_from_db)()
    assert run.status == RunStatus.CANCELLED
    assert run.cancel_requested_at is not None
    [accepted] = [f for f in frames if f["type"] == "accepted"]
    assert accepted == {
        "type": "accepted",
        "request": "cancel",
        "run_ids": [run.public_id],
        "runs": {run.public_id: accepted["runs"][run.public_id] | {"status": "cancelled", "active": False}},
        "pending_approval": None,
    }
    assert accepted["runs"][run.public_id]["banner"] == {"kind": "info", "text": "Stopped.", "action": None}
    assert frames[-1]["run_id"] == run.public_id
    assert frames[-1]["stop_reason"] == "cancelled"
    assert seen_by_other_tab == frames[-1]
    await communicator.disconnect()
    await other_tab.disconnect()


async def test_a_server_fault_is_an_error_frame_and_the_socket_stays_open(chat_app, cast, agent, monkeypatch):
    from agents.chat import actions as chat

    def broken(**kwargs):
        raise ConnectionError("the database went away")

    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)
    monkeypatch.setattr(chat, "chat_sync", broken)

    await communicator.send_json_to({"type": "resume", "after_seq": 0})
    error = await communicator.receive_json_from()
    await communicator.send_json_to({"type": "retry"})
    still_answering = await communicator.receive_json_from()

    assert error == {"type": "error", "detail": SERVER_FAULT, "request": "resume"}
    assert still_answering["detail"] == "There is no failed run to retry."
    await communicator.disconnect()


async def test_a_message_to_a_busy_agent_is_refused_as_on_rest_and_starts_nothing(chat_app, cast, agent):
    """The busy rule of ``agents.runs.start.run_start``: the same detail as the REST 409 (tests/runs)."""
    await database_sync_to_async(RunFactory)(agent=agent, status=RunStatus.RUNNING, heartbeat_at=timezone.now())
    communicator, _, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)

    await communicator.send_json_to({"type": "send", "text": "Are you there?", "otid": "busy-1"})
    reply = await communicator.receive_json_from()

    assert reply == {"type": "error", "detail": AgentBusy.default_detail, "request": "send"}
    assert await database_sync_to_async(Run.objects.filter(agent=agent).count)() == 1
    await communicator.disconnect()


async def test_a_member_removed_from_the_organization_is_disconnected_at_their_next_frame(chat_app, cast, agent):
    communicator, _, _ = await open_chat(chat_app, cast.bob, agent, organization=cast.org_a)
    await database_sync_to_async(Membership.objects.filter(user=cast.bob, organization=cast.org_a).delete)()

    await communicator.send_json_to({"type": "send", "text": "Still here?", "otid": "gone-1"})
    closed = await communicator.receive_output(timeout=5)

    assert closed == {"type": "websocket.close", "code": 4403}
    assert await database_sync_to_async(Run.objects.filter(agent=agent).count)() == 0


async def test_a_deactivated_user_stops_receiving_events_within_the_recheck_interval(
    chat_app, cast, agent, monkeypatch
):
    monkeypatch.setattr("agents.chat.consumers.ACCESS_RECHECK_SECONDS", 0.0)
    communicator, _, _ = await open_chat(chat_app, cast.bob, agent, organization=cast.org_a)
    await database_sync_to_async(User.objects.filter(pk=cast.bob.pk).update)(is_active=False)

    await publish(agent.id, [{"type": "memory_updated", "agent_ids": [agent.public_id]}])
    closed = await communicator.receive_output(timeout=5)

    assert closed == {"type": "websocket.close", "code": 4403}
