"""Async runs through ``letta-client`` with the production executor: Daphne queues them on Redis,
a real Celery worker (another process, the same database) executes them.

``create_async`` answers at once with the queued run; the worker completes it; its
messages and its resumable stream are there afterwards. A queued run can be
cancelled before any worker takes it, and a task delivered twice runs the turn once.
The stack (server, worker helpers, demo organization) is the chat tests' own.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import TYPE_CHECKING, Any

import pytest
import redis
from letta_client import Letta, MessageCreate

from tests.support.databases import scratch_database
from tests.support.live_chat import CeleryStack, redis_test_url, start_chat_server
from tests.support.polling import poll
from tests.support.streams import TOOL_TURN, assemble, seq_ids

if TYPE_CHECKING:
    from collections.abc import Iterator

    from letta_client import Run

pytestmark = [pytest.mark.live_server, pytest.mark.worker, pytest.mark.sdk, pytest.mark.timeout(240)]

FINISHED = {"completed", "failed", "cancelled"}
DICE = "call roll_dice with num_sides=6"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CeleryStack]:
    folder = tmp_path_factory.mktemp("api-celery")
    queue = f"api-test-{uuid.uuid4().hex[:12]}"
    with scratch_database(folder) as database_url:
        env = {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_test_url(),
            "CELERY_BROKER_URL": redis_test_url(),
            "RUN_EXECUTOR": "celery",
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "CHANNEL_LAYER_PREFIX": queue,
            "DEMO_TOKEN_DELAY": "0.02",
        }
        with start_chat_server(folder, extra_env=env) as chat:
            celery = CeleryStack(chat=chat, folder=folder)
            try:
                yield celery
            finally:
                celery.stop_worker()


@pytest.fixture
def worker(stack: CeleryStack) -> CeleryStack:
    """The stack with its worker up."""
    if stack.worker is None:
        stack.start_worker()
    return stack


@pytest.fixture
def no_worker(stack: CeleryStack) -> CeleryStack:
    """The stack with its worker down: what is queued stays queued."""
    stack.stop_worker()
    return stack


@pytest.fixture
def client(stack: CeleryStack) -> Letta:
    return Letta(base_url=stack.chat.url, token=stack.chat.demo_api_key)


def send_async(client: Letta, agent_id: str, text: str) -> Run:
    return client.agents.messages.create_async(agent_id=agent_id, messages=[MessageCreate(role="user", content=text)])


def finished(client: Letta, run_id: str) -> Run:
    return poll(lambda: client.runs.retrieve(run_id), lambda run: run.status in FINISHED)


def deliveries(stack: CeleryStack, task_id: str) -> list[str]:
    """What the worker logged about task ``task_id``: ``received`` and ``succeeded`` lines, in order."""
    pattern = re.compile(rf"Task agents\.tasks\.execute_run_task\[{task_id}\] (received|succeeded)")
    return [match[1] for match in pattern.finditer(stack.worker_log())]


def test_an_async_message_returns_the_queued_run_and_a_worker_completes_it(worker: CeleryStack, client: Letta) -> None:
    agent_id = worker.chat.new_agent("async-turn")

    queued = send_async(client, agent_id, DICE)
    run = finished(client, queued.id)

    assert (queued.status, queued.background, queued.agent_id) == ("created", True, agent_id)
    assert (run.status, run.stop_reason) == ("completed", "end_turn")
    said = client.runs.messages.list(run_id=run.id)
    assert [m.message_type for m in said] == ["user_message", *TOOL_TURN]
    assert "roll_dice" in said[-1].content
    assert [step.status for step in client.runs.steps.list(run_id=run.id)] == ["success", "success"]


def test_the_run_stream_follows_the_worker_and_resumes_after_any_seq_id(worker: CeleryStack, client: Letta) -> None:
    agent_id = worker.chat.new_agent("async-stream")
    run = send_async(client, agent_id, DICE)

    live = list(client.runs.stream(run_id=run.id))
    messages = [chunk for chunk in live if chunk.message_type not in ("stop_reason", "usage_statistics")]
    resumed = list(client.runs.stream(run_id=run.id, starting_after=messages[2].seq_id))

    assert seq_ids(messages) == sorted(set(seq_ids(messages)))
    assert [kind for kind, _, _ in assemble(messages)] == list(TOOL_TURN)
    assert assemble(messages[:3] + resumed[:-2]) == assemble(messages)
    assert resumed[-2].stop_reason == live[-2].stop_reason == "end_turn"
    assert resumed[-1].run_ids == [run.id]


def test_a_queued_run_cancelled_before_a_worker_takes_it_ends_cancelled_and_never_runs(
    no_worker: CeleryStack, client: Letta
) -> None:
    agent_id = no_worker.chat.new_agent("async-cancel")
    run = send_async(client, agent_id, DICE)
    task_id = waiting_task(no_worker)["headers"]["id"]

    answer = client.agents.messages.cancel(agent_id=agent_id, run_ids=[run.id])
    cancelled = client.runs.retrieve(run.id)
    no_worker.start_worker()
    poll(lambda: deliveries(no_worker, task_id), lambda lines: "succeeded" in lines)

    assert answer == {run.id: "cancelled"}
    assert (cancelled.status, cancelled.stop_reason) == ("cancelled", "cancelled")
    assert client.runs.retrieve(run.id).status == "cancelled"
    assert client.runs.messages.list(run_id=run.id) == []
    assert client.runs.steps.list(run_id=run.id) == []
    assert finished(client, send_async(client, agent_id, "hello").id).status == "completed"


def test_a_task_delivered_twice_runs_the_turn_once(no_worker: CeleryStack, client: Letta) -> None:
    agent_id = no_worker.chat.new_agent("async-twice")
    run = send_async(client, agent_id, DICE)
    task_id = deliver_again(no_worker)

    no_worker.start_worker()
    done = finished(client, run.id)
    logged = poll(lambda: deliveries(no_worker, task_id), lambda lines: lines.count("succeeded") == 2)

    assert logged.count("received") == 2
    assert done.status == "completed"
    said = [m.message_type for m in client.runs.messages.list(run_id=run.id)]
    assert said.count("user_message") == 1
    assert said.count("tool_return_message") == 1
    assert len(client.runs.steps.list(run_id=run.id)) == 2
    history = client.agents.messages.list(agent_id=agent_id, limit=100)
    assert [m.message_type for m in history].count("tool_return_message") == 1


def _queue(stack: CeleryStack) -> tuple[redis.Redis, str]:
    return redis.Redis.from_url(redis_test_url()), stack.chat.server.env["CELERY_TASK_DEFAULT_QUEUE"]


def waiting_task(stack: CeleryStack) -> dict[str, Any]:
    """The one task message waiting in the stack's queue (no worker has taken it)."""
    broker, queue = _queue(stack)
    waiting = poll(lambda: broker.lrange(queue, 0, -1), bool, timeout=10)
    assert len(waiting) == 1
    return dict(json.loads(waiting[0]))


def deliver_again(stack: CeleryStack) -> str:
    """Put the waiting task in the queue a second time, as a broker redelivery does; its id."""
    broker, queue = _queue(stack)
    task = waiting_task(stack)
    broker.lpush(queue, json.dumps(task))
    return str(task["headers"]["id"])
