"""Faults injected into a running stack (issue 23): Redis and Postgres restart, a worker is killed,
in the middle of streamed, blocking and background turns.

After each: the processes recover without being restarted, every message acknowledged before
the fault is listed exactly once, no run stays ``running``, and the next turn completes.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from tests.faults.conftest import FaultStack

pytestmark = [pytest.mark.live_server, pytest.mark.worker, pytest.mark.timeout(170)]

LONG_STORY = "Tell me a long story " + "please " * 25
RECOVERY_S = 30  # a fault is survived when everything is fine again within this long
ENDED_S = 20  # an open stream continues or ends within this long after a fault


def api(faults: FaultStack) -> httpx.Client:
    web = faults.stack.webs["web-1"]
    return httpx.Client(base_url=web.url, headers={"Authorization": f"Bearer {faults.stack.api_key}"}, timeout=30)


def new_agent(faults: FaultStack, name: str) -> str:
    with api(faults) as client:
        answer = client.post("/v1/agents/", json={"name": name, "model": "demo/echo-1"})
    return str(answer.raise_for_status().json()["id"])


def eventually(check: Any, *, seconds: float, what: str) -> Any:
    """``check()``'s first truthy answer; errors of an outage meanwhile count as not yet."""
    deadline = time.monotonic() + seconds
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (httpx.HTTPError, ValueError, KeyError) as error:
            last = error
        else:
            if last:
                return last
        time.sleep(0.5)
    raise AssertionError(f"{what}; last: {last!r}")


def user_texts(faults: FaultStack, agent_id: str) -> list[str]:
    with api(faults) as client:
        listed = client.get(f"/v1/agents/{agent_id}/messages", params={"limit": 200}).raise_for_status().json()
    return [m["content"] for m in listed if m["message_type"] == "user_message"]


def runs(faults: FaultStack, agent_id: str) -> list[dict[str, Any]]:
    with api(faults) as client:
        return list(client.get("/v1/runs/", params={"agent_id": agent_id}).raise_for_status().json())


def no_run_active(faults: FaultStack, agent_id: str) -> bool:
    return all(run["status"] not in {"created", "running"} for run in runs(faults, agent_id))


def turn_completes(faults: FaultStack, agent_id: str, text: str) -> bool:
    with api(faults) as client:
        answer = client.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})
    return answer.status_code == 200 and answer.json()["stop_reason"]["stop_reason"] == "end_turn"


def assert_recovered(faults: FaultStack, agent_id: str, acknowledged: list[str]) -> None:
    """The checks every fault ends with, from outside, on the processes that lived through it."""
    assert all(process.alive for process in [*faults.stack.webs.values(), *faults.stack.workers.values()]), (
        "a process died: " + faults.stack.workers["worker-1"].log()[-3000:]
    )
    eventually(lambda: no_run_active(faults, agent_id), seconds=RECOVERY_S, what="a run stayed running")
    eventually(lambda: turn_completes(faults, agent_id, "after the fault"), seconds=RECOVERY_S, what="no next turn")
    texts = user_texts(faults, agent_id)
    for text in acknowledged:
        assert texts.count(text) == 1, (text, texts)


class StreamReader(threading.Thread):
    """Reads one SSE response to its end in the background: its frames, and whether it ended."""

    def __init__(self, faults: FaultStack, path: str, body: dict[str, Any]) -> None:
        super().__init__(daemon=True)
        self.faults, self.path, self.body = faults, path, body
        self.frames: list[dict[str, Any]] = []
        self.status = 0
        self.ended = threading.Event()
        self.started_streaming = threading.Event()

    def run(self) -> None:
        try:
            with api(self.faults) as client, client.stream("POST", self.path, json=self.body, timeout=120) as answer:
                self.status = answer.status_code
                for line in answer.iter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        self.frames.append(json.loads(line[6:]))
                        self.started_streaming.set()
        except httpx.HTTPError:
            pass
        finally:
            self.started_streaming.set()
            self.ended.set()


def stream_turn(faults: FaultStack, agent_id: str, text: str, **extra: Any) -> StreamReader:
    reader = StreamReader(
        faults,
        f"/v1/agents/{agent_id}/messages/stream",
        {"messages": [{"role": "user", "content": text}], "stream_tokens": True, **extra},
    )
    reader.start()
    assert reader.started_streaming.wait(30), "the stream never started"
    return reader


def send_async(faults: FaultStack, agent_id: str, text: str) -> str:
    with api(faults) as client:
        answer = client.post(
            f"/v1/agents/{agent_id}/messages/async", json={"messages": [{"role": "user", "content": text}]}
        )
    return str(answer.raise_for_status().json()["id"])


def run_status(faults: FaultStack, run_id: str) -> str:
    with api(faults) as client:
        return str(client.get(f"/v1/runs/{run_id}").raise_for_status().json()["status"])


def test_a_redis_restart_during_a_streamed_turn_ends_or_continues_the_stream_and_loses_nothing(faults: FaultStack):
    agent_id = new_agent(faults, "redis-stream")
    reader = stream_turn(faults, agent_id, LONG_STORY)

    faults.redis.restart()

    assert reader.ended.wait(ENDED_S), "the open stream hung after the Redis restart"
    assert reader.status == 200
    assert_recovered(faults, agent_id, [LONG_STORY])


@pytest.mark.parametrize("graceful", [True, False], ids=["restarted", "killed"])
def test_a_redis_restart_during_a_background_turn_keeps_the_worker_and_the_run_ends(faults: FaultStack, graceful):
    agent_id = new_agent(faults, f"redis-background-{graceful}")
    run_id = send_async(faults, agent_id, LONG_STORY)
    eventually(lambda: run_status(faults, run_id) == "running", seconds=30, what="the worker never started the run")

    faults.redis.restart(graceful=graceful)

    eventually(lambda: run_status(faults, run_id) not in {"created", "running"}, seconds=RECOVERY_S, what="stuck")
    assert faults.stack.workers["worker-1"].alive, faults.stack.workers["worker-1"].log()[-3000:]
    later = send_async(faults, agent_id, "a background turn after the restart")
    eventually(lambda: run_status(faults, later) == "completed", seconds=RECOVERY_S, what="no background turn")
    assert_recovered(faults, agent_id, [LONG_STORY, "a background turn after the restart"])


def test_a_postgres_restart_during_a_blocking_turn_answers_cleanly_and_frees_the_agent(faults: FaultStack):
    agent_id = new_agent(faults, "postgres-blocking")
    answers: list[httpx.Response] = []

    def blocking() -> None:
        with api(faults) as client:
            answers.append(
                client.post(
                    f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": LONG_STORY}]}
                )
            )

    sender = threading.Thread(target=blocking, daemon=True)
    sender.start()
    eventually(lambda: LONG_STORY in user_texts(faults, agent_id), seconds=30, what="the turn never started")

    faults.postgres.restart()

    sender.join(ENDED_S + 30)
    assert answers, "the blocking request hung after the Postgres restart"
    answer = answers[0]
    assert answer.status_code in {200, 503}, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert_recovered(faults, agent_id, [LONG_STORY])


def test_a_postgres_restart_during_a_streamed_turn_ends_the_stream(faults: FaultStack):
    agent_id = new_agent(faults, "postgres-stream")
    reader = stream_turn(faults, agent_id, LONG_STORY)

    faults.postgres.restart()

    assert reader.ended.wait(ENDED_S + 15), "the open stream hung after the Postgres restart"
    assert_recovered(faults, agent_id, [LONG_STORY])


def test_a_killed_worker_mid_turn_has_its_run_ended_without_beat_and_a_new_worker_runs_the_next(
    faults: FaultStack,
):
    agent_id = new_agent(faults, "killed-worker")
    run_id = send_async(faults, agent_id, LONG_STORY)
    eventually(lambda: run_status(faults, run_id) == "running", seconds=30, what="the worker never started the run")

    faults.stack.kill("worker-1")

    eventually(lambda: run_status(faults, run_id) == "failed", seconds=RECOVERY_S, what="the dead worker's run")
    faults.stack.start(workers=("worker-1",))
    assert_recovered(faults, agent_id, [LONG_STORY])
