"""Any web process serves any chat and any worker runs any turn: two Daphne processes, two Celery
workers, one Postgres, one Redis (the production topology of docker-compose.yml, without the proxy).

A tab on web-1 follows, token by token, a run sent through web-2 and executed by a worker;
a cancel through web-2 stops a run on worker-1; an approval answered on web-1 resumes a
run whose request came through web-2. Killing a worker mid-run leaves a run the sweeper
ends (the lease is 2 s here) and the other worker answers the retry; killing the tab's web
process mid-run loses nothing: the tab reconnects to the other one and resumes after the
last ``seq`` it saw.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.crossprocess.stack import ProcessStack
from tests.support.live_chat import ChatServer, LiveSocket, live_socket

pytestmark = [pytest.mark.live_server, pytest.mark.worker, pytest.mark.timeout(240)]

LONG_STORY = "Tell me a long story " + "please " * 25
SWEEP_BOUND_S = 2 * 2 + 15  # stale after 2 x the 2 s lease; the rest is slack for a loaded machine
WORKER_DONE_S = 30


def finished(run_id: str) -> Any:
    return lambda frame: frame["type"] == "run_finished" and frame["run_id"] == run_id


def first_delta(run_id: str) -> Any:
    return lambda frame: frame["type"] == "text_delta" and frame["run_id"] == run_id


def synced(frame: dict[str, Any]) -> bool:
    return frame["type"] == "sync"


def send_async(chat: ChatServer, agent_id: str, text: str) -> str:
    """Send ``text`` through ``chat``'s web process as a background run (Letta's ``create_async``); the run id."""
    with chat.api() as api:
        response = api.post(
            f"/v1/agents/{agent_id}/messages/async", json={"messages": [{"role": "user", "content": text}]}
        )
    return str(response.raise_for_status().json()["id"])


def run_status(chat: ChatServer, run_id: str) -> dict[str, Any]:
    with chat.api() as api:
        return dict(api.get(f"/v1/runs/{run_id}").raise_for_status().json())


def stored_messages(chat: ChatServer, agent_id: str) -> list[dict[str, Any]]:
    with chat.api() as api:
        return list(api.get(f"/v1/agents/{agent_id}/messages", params={"limit": 100}).raise_for_status().json())


async def opened(tab: LiveSocket, after_seq: int = 0) -> dict[str, Any]:
    await tab.send({"type": "resume", "after_seq": after_seq})
    return (await tab.until(synced))[-1]


def wait_for(condition: Any, *, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


async def test_a_tab_on_web_1_follows_token_by_token_a_run_sent_through_web_2_and_run_by_a_worker(
    stack: ProcessStack,
):
    web_1, web_2 = stack.chat("web-1"), stack.chat("web-2")
    agent_id = web_2.new_agent("xp-stream")
    executed_before = stack.runs_executed("worker-1") + stack.runs_executed("worker-2")

    async with live_socket(web_1, web_1.login(), agent_id) as tab:
        await opened(tab)
        run_id = send_async(web_2, agent_id, "Tell me about two processes sharing one database")
        frames = await tab.until(finished(run_id))

    events = [frame for frame in frames if frame.get("run_id") == run_id]
    deltas = [frame for frame in events if frame["type"] == "text_delta"]
    assert events[-1]["stop_reason"] == "end_turn"
    assert len(deltas) > 3  # tokens arrived one frame after another, not as one finished message
    assert [frame["seq"] for frame in events] == sorted({frame["seq"] for frame in events})
    said = "".join(delta["text"] for delta in deltas)
    stored = [m for m in stored_messages(web_2, agent_id) if m["message_type"] == "assistant_message"]
    assert stored[-1]["content"] == said
    wait_for(
        lambda: stack.runs_executed("worker-1") + stack.runs_executed("worker-2") == executed_before + 1,
        seconds=WORKER_DONE_S,
        what="no worker logged the run as done",
    )


async def test_a_cancel_through_web_2_stops_a_run_executing_on_worker_1(stack: ProcessStack):
    web_1, web_2 = stack.chat("web-1"), stack.chat("web-2")
    agent_id = web_1.new_agent("xp-cancel")

    with stack.only("worker-1"):
        executed_before = stack.runs_executed("worker-1")
        async with live_socket(web_1, web_1.login(), agent_id) as tab:
            await opened(tab)
            run_id = send_async(web_1, agent_id, LONG_STORY)
            await tab.until(first_delta(run_id))
            with web_2.api() as api:
                api.post(f"/v1/runs/{run_id}/cancel").raise_for_status()
            frames = await tab.until(finished(run_id))
        wait_for(
            lambda: stack.runs_executed("worker-1") == executed_before + 1,
            seconds=WORKER_DONE_S,
            what="worker-1 did not end the cancelled run",
        )

    assert frames[-1]["stop_reason"] == "cancelled"
    assert run_status(web_1, run_id)["status"] == "cancelled"
    streamed = "".join(f["text"] for f in tab.frames if f["type"] == "text_delta" and f["run_id"] == run_id)
    assert "Try: " not in streamed  # the demo reply's last sentence never came: it stopped mid-reply


async def test_an_approval_answered_on_web_1_resumes_a_run_whose_request_came_through_web_2(stack: ProcessStack):
    web_1, web_2 = stack.chat("web-1"), stack.chat("web-2")
    agent_id = web_2.new_agent(
        "xp-approval", tool_rules=[{"tool_name": "get_secret_code", "type": "requires_approval"}]
    )

    async with live_socket(web_1, web_1.login(), agent_id) as tab:
        await opened(tab)
        run_id = send_async(web_2, agent_id, "call get_secret_code with input_text=alpha")
        asked = (await tab.until(finished(run_id)))[-1]
        request = asked["pending_approval"]
        await tab.send(
            {
                "type": "approve",
                "approvals": [
                    {"type": "approval", "tool_call_id": request["tool_call"]["tool_call_id"], "approve": True}
                ],
            }
        )
        accepted = (await tab.until(lambda frame: frame["type"] == "accepted"))[-1]
        resumed = (await tab.until(finished(accepted["run_ids"][0])))[-1]

    assert asked["stop_reason"] == "requires_approval"
    assert request["message_type"] == "approval_request_message"
    assert resumed["stop_reason"] == "end_turn"
    said = stored_messages(web_2, agent_id)
    assert [
        m["message_type"] for m in said if m["message_type"] in ("approval_response_message", "tool_return_message")
    ] == [
        "approval_response_message",
        "tool_return_message",
    ]
    assert "get_secret_code says the secret code is SECRET-" in said[-1]["content"]


async def test_a_killed_worker_loses_no_run_the_sweeper_ends_it_and_the_other_worker_answers_the_retry(
    stack: ProcessStack,
):
    web_1, web_2 = stack.chat("web-1"), stack.chat("web-2")
    agent_id = web_1.new_agent("xp-worker-kill")

    async with live_socket(web_1, web_1.login(), agent_id) as tab:
        await opened(tab)
        with stack.only("worker-2"):
            run_id = send_async(web_2, agent_id, LONG_STORY)
            await tab.until(first_delta(run_id))
            stack.kill("worker-2")
        killed_at = time.monotonic()

        verdict = None
        while verdict is None:  # a resync sweeps the agent's dead runs
            assert time.monotonic() - killed_at < SWEEP_BOUND_S, "the dead worker's run was not swept"
            await asyncio.sleep(1)
            run = (await opened(tab, after_seq=1 << 30))["run"]
            if run["id"] == run_id and not run["active"]:
                verdict = run
        await tab.send({"type": "retry"})
        accepted = (await tab.until(lambda frame: frame["type"] == "accepted" and frame["request"] == "retry"))[-1]
        retried = (await tab.until(finished(accepted["run_ids"][0]), timeout=60))[-1]

    assert (verdict["status"], "stopped responding" in verdict["error"]) == ("failed", True)
    assert retried["stop_reason"] == "end_turn"
    assert run_status(web_2, accepted["run_ids"][0])["status"] == "completed"
    said = stored_messages(web_2, agent_id)
    asked = [m for m in said if m["message_type"] == "user_message" and m["content"] == LONG_STORY]
    assert len(asked) == 1  # the retry continued from the stored message
    assert said[-1]["message_type"] == "assistant_message"
    assert LONG_STORY.strip()[:40] in said[-1]["content"]


async def test_a_killed_web_process_loses_no_run_and_its_tab_resumes_on_the_other_by_seq(stack: ProcessStack):
    web_1, web_2 = stack.chat("web-1"), stack.chat("web-2")
    agent_id = web_2.new_agent("xp-web-kill")
    session = web_1.login()  # sessions live in Postgres: the cookie is good on either process

    async with live_socket(web_1, session, agent_id) as tab:
        last_seq = max([row["row"]["seq"] for row in (await opened(tab))["rows"]], default=0)
        run_id = send_async(web_2, agent_id, LONG_STORY)
        frames = await tab.until(first_delta(run_id))
        last_seq = max([last_seq] + [f["row"]["seq"] for f in frames if f["type"] == "message"])
        stack.kill("web-1")
        with pytest.raises(ConnectionClosed):
            await tab.until(lambda frame: False, timeout=10)

    rows: list[dict[str, Any]] = []
    async with live_socket(web_2, session, agent_id) as tab:
        while True:
            sync = await opened(tab, after_seq=last_seq)
            rows += sync["rows"]
            last_seq = max([last_seq] + [row["row"]["seq"] for row in sync["rows"]])
            if sync["run"]["id"] == run_id and not sync["run"]["active"] and not sync["has_more"]:
                break
            await asyncio.sleep(0.5)
    stack.add_web("web-1")  # back on its port, serving the same chats
    history = web_1.history(session, agent_id)

    assert run_status(web_1, run_id)["status"] == "completed"
    assert [row["row"]["role"] for row in rows][-1] == "assistant"
    assert LONG_STORY.strip()[:40] in rows[-1]["messages"][-1]["content"]
    # What the tab saw before the kill and after the resume is the whole conversation, each row once.
    seen = [row["row"]["id"] for row in history]
    assert [row["row"]["id"] for row in rows] == seen[-len(rows) :]
    assert len(set(seen)) == len(seen)
    assert httpx.get(f"{web_1.url}/v1/health/", timeout=5).status_code == 200
