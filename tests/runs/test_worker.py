"""The production path with real processes: Daphne queues runs on Redis, a Celery worker executes them.

The worker publishes the engine's events to the agent's group on the Redis channel
layer; Daphne's consumer forwards them to the tab. A worker killed mid-run leaves a
run that the sweeper ends (within 2 x the lease the test server runs with), and
the agent answers again once a worker is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from channels_redis.core import RedisChannelLayer

from agents.broadcast import agent_group
from tests.support.live_chat import CeleryStack, live_socket, redis_test_url
from tests.support.polling import poll

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tests.support.live_chat import ChatServer, LiveSocket

pytestmark = [pytest.mark.live_server, pytest.mark.worker, pytest.mark.timeout(180)]

SWEEP_BOUND_S = 2 * 2  # the stack's AGENT_TURN_LOCK_SECONDS is 2
# Longer than channels_redis's 5 s BZPOPMIN and redis-py 8's default 5 s socket read timeout.
QUIET_S = 7


def finished(frame: dict) -> bool:
    return frame["type"] == "run_finished"


@contextlib.asynccontextmanager
async def synced_tab(chat: ChatServer, session: httpx.Client, agent_id: str) -> AsyncIterator[LiveSocket]:
    """The agent's chat socket for ``session``, resumed after the agent's first rows and in sync."""
    async with live_socket(chat, session, agent_id) as tab:
        await tab.send({"type": "resume", "after_seq": 1})
        await tab.until(lambda f: f["type"] == "sync")
        yield tab


def latest_run(session: httpx.Client, agent_id: str) -> dict:
    """The agent's latest run as the database has it (through the chat's history endpoint)."""
    return session.get(f"/agents/{agent_id}/history/").raise_for_status().json()["run"]


def events_run(events: list[dict]) -> dict:
    """What the run's last event says about it, in the shape of the history endpoint's run."""
    usage = events[-1]["usage"]
    keys = ("prompt_tokens", "completion_tokens", "total_tokens", "step_count", "estimated")
    return {
        "stop_reason": events[-1]["stop_reason"],
        "error": events[-1]["error"],
        "usage": {key: usage[key] for key in keys},
    }


async def test_a_worker_runs_the_turn_and_publishes_its_events_to_the_agent_group(celery_stack: CeleryStack):
    chat = celery_stack.chat
    agent_id = chat.new_agent("worker-turn")
    layer = RedisChannelLayer(hosts=[redis_test_url()], prefix=chat.server.env["CHANNEL_LAYER_PREFIX"])
    group_channel = await layer.new_channel()
    await layer.group_add(agent_group(agent_id.removeprefix("agent-")), group_channel)
    session = chat.login()

    async with synced_tab(chat, session, agent_id) as tab:
        await tab.send({"type": "send", "text": "call roll_dice with num_sides=6", "otid": "worker-1"})
        frames = await tab.until(finished)
    published = []
    async with asyncio.timeout(10):
        while not any(p["type"] == "run_finished" for p in published):
            published += (await layer.receive(group_channel))["events"]
    await layer.flush()

    accepted = next(f for f in frames if f["type"] == "accepted")
    run_id = accepted["run_ids"][0]
    events = [f for f in frames if f.get("run_id") == run_id]
    assert events[-1]["stop_reason"] == "end_turn"
    assert [e["seq"] for e in events] == sorted({e["seq"] for e in events})
    assert any(e["type"] == "text_delta" for e in events)
    assert [p for p in published if p["run_id"] == run_id] == events
    assert latest_run(session, agent_id) == {
        **events_run(events),
        "id": run_id,
        "status": "completed",
        "active": False,
        "banner": None,
        "unsaved_note": None,
    }
    assert events[-1]["run"] == latest_run(session, agent_id)  # the run's end says what the history says
    rows = chat.history(session, agent_id)
    assert [[m["message_type"] for m in r["messages"]] for r in rows[-4:]] == [
        ["user_message"],
        ["reasoning_message", "assistant_message", "tool_call_message"],
        ["tool_return_message"],
        ["reasoning_message", "assistant_message"],
    ]
    assert "roll_dice returned" in rows[-1]["messages"][-1]["content"]


async def test_a_killed_worker_leaves_no_run_running_and_the_agent_answers_again(celery_stack: CeleryStack):
    chat = celery_stack.chat
    agent_id = chat.new_agent("worker-kill")
    session = chat.login()

    async with synced_tab(chat, session, agent_id) as tab:
        await tab.send({"type": "send", "text": "Tell me a long story " + "please " * 20, "otid": "kill-1"})
        frames = await tab.until(lambda f: f["type"] == "text_delta")
        run_id = next(f for f in frames if f["type"] == "accepted")["run_ids"][0]
        celery_stack.kill_worker()
        killed_at = time.monotonic()

        # The tab learns what happened: a resync sweeps, and the swept run's verdict is published.
        verdict = None
        while verdict is None:
            assert time.monotonic() - killed_at < SWEEP_BOUND_S + 10, "the dead run was not swept in time"
            await asyncio.sleep(1)
            await tab.send({"type": "resume", "after_seq": 1})
            received = await tab.until(lambda f: f["type"] == "sync")
            sync = received[-1]
            if sync["run"]["id"] == run_id and not sync["run"]["active"]:
                verdict = sync["run"]
        assert verdict["status"] == "failed"
        assert "stopped responding" in verdict["error"]
        told = [f for f in tab.frames if f["type"] == "run_finished" and f["run_id"] == run_id]
        if not told:  # the sweeper's verdict crosses Redis after the sync reply
            told = (await tab.until(lambda f: f["type"] == "run_finished" and f["run_id"] == run_id))[-1:]
        assert told[0]["stop_reason"] == "error"
        assert "stopped responding" in told[0]["error"]

        celery_stack.start_worker()
        await tab.send({"type": "retry"})
        retried = await tab.until(finished, timeout=60)

    retry_id = next(f for f in retried if f["type"] == "accepted")["run_ids"][0]
    assert retried[-1]["run_id"] == retry_id
    assert retried[-1]["stop_reason"] == "end_turn"
    rows = chat.history(session, agent_id)
    user_rows = [r for r in rows if r["row"]["role"] == "user" and r["messages"][0]["otid"] == "kill-1"]
    assert len(user_rows) == 1  # the retry continued from the stored message instead of storing it again
    assert rows[-1]["row"]["role"] == "assistant"
    assert latest_run(session, agent_id)["id"] == retry_id
    assert latest_run(session, agent_id)["status"] == "completed"


async def test_a_tab_stays_connected_while_its_agent_is_quiet_for_longer_than_redis_read_timeouts(
    celery_stack: CeleryStack,
):
    chat = celery_stack.chat
    agent_id = chat.new_agent("worker-quiet")
    session = chat.login()

    async with synced_tab(chat, session, agent_id) as tab:
        await asyncio.sleep(QUIET_S)  # nothing is published to the agent's group meanwhile
        await tab.send({"type": "send", "text": "hello after a quiet spell", "otid": "quiet-1"})
        frames = await tab.until(finished)

    assert frames[-1]["stop_reason"] == "end_turn"


# The request waited five minutes, and its agent allows one (run in the server's manage.py shell).
EXPIRE = (
    "import datetime; from django.utils import timezone; from agents.models import Agent, Message; "
    "a = Agent.objects.get(pk='AGENT_PK'); a.approval_expiry_minutes = 1; a.save(); "
    "Message.objects.filter(agent=a).update(created_at=timezone.now() - datetime.timedelta(minutes=5))"
)


def test_beat_on_a_worker_denies_an_expired_approval_and_the_worker_runs_the_agents_answer(
    celery_stack: CeleryStack,
):
    chat = celery_stack.chat
    agent_id = chat.new_agent("expiring on a worker")
    with chat.api() as api:
        asked = api.post(
            f"/v1/agents/{agent_id}/messages",
            json={"messages": [{"role": "user", "content": "call get_secret_code with input_text=hi"}]},
        ).raise_for_status()
        assert asked.json()["stop_reason"]["stop_reason"] == "requires_approval"
        chat.shell_for_agent(agent_id, EXPIRE)

        celery_stack.stop_worker()
        celery_stack.start_worker(beat=True)
        try:
            messages = poll(
                lambda: api.get(f"/v1/agents/{agent_id}/messages", params={"limit": 50}).raise_for_status().json(),
                lambda messages: (
                    messages[-1]["message_type"] == "assistant_message"
                    and any(m["message_type"] == "approval_response_message" for m in messages)
                ),
                timeout=60,
            )
            runs = api.get("/v1/runs/", params={"agent_id": agent_id}).raise_for_status().json()
        finally:
            celery_stack.stop_worker()
            celery_stack.start_worker()

    [decision] = [m for m in messages if m["message_type"] == "approval_response_message"]
    assert (decision["approve"], decision["reason"]) == (False, "Approval expired after 1 minutes")
    [result] = [m for m in messages if m["message_type"] == "tool_return_message"]
    assert "Approval expired after 1 minutes" in result["tool_return"]
    assert sorted(run["status"] for run in runs) == ["completed", "completed"]
    assert "expire_pending_approvals_task" in celery_stack.worker_log()
