"""Resident memory of a web process holding open chat streams, and of a worker over many runs.

On Postgres and Redis (the production topology, ``benchmarks/multiprocess.py``'s stack
without the proxy): one Daphne process and one Celery worker (solo pool, so the
worker is one process). Prints, from ``/proc/<pid>/status`` (VmRSS):

- the web process idle, then with ``--streams`` chat WebSockets open (logged-in tabs
  spread over ``--agents`` agents, each synced), then after a run streamed to them all;
- the worker after a warm-up, after ``--runs`` background runs and after a second
  ``--runs`` (a leak shows as growth between the last two).

Runs go through the Anthropic path against the fake model over HTTP (``messages/async``,
one at a time per agent, ``--concurrency`` agents at once). It asserts nothing. Run::

    .venv/bin/python benchmarks/bench_memory.py --postgres postgres://postgres@127.0.0.1:5432/agentserver \\
        --redis redis://127.0.0.1:6379/3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()

import httpx
from harness import fake_model, in_threads, load
from websockets.asyncio.client import connect as ws_connect

from benchmarks.multiprocess import started_stack
from tests.crossprocess.stack import ProcessStack
from tests.support.live_chat import ChatServer

MODEL = "anthropic/claude-sonnet-4-5-20250929"
FINISHED = {"completed", "failed", "cancelled"}
WARM_UP_RUNS = 50


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


async def open_streams(chat: ChatServer, cookies: str, agent_ids: list[str], count: int) -> list[Any]:
    """``count`` chat WebSockets, round-robin over ``agent_ids``, each synced once."""
    base = chat.url.replace("http://", "ws://")
    sockets = []
    for index in range(count):
        agent_id = agent_ids[index % len(agent_ids)]
        socket = await ws_connect(
            f"{base}/ws/agents/{agent_id}/", origin=chat.url, additional_headers={"Cookie": cookies}, max_queue=None
        )
        await socket.send(json.dumps({"type": "resume", "after_seq": 0}))
        while json.loads(await socket.recv())["type"] != "sync":
            pass
        sockets.append(socket)
    return sockets


async def drain_until_finished(socket: Any) -> int:
    """Frames a tab receives until the run it follows finishes."""
    frames = 0
    while True:
        frames += 1
        if json.loads(await socket.recv())["type"] == "run_finished":
            return frames


def measure_web(stack: ProcessStack, args: argparse.Namespace) -> None:
    chat = stack.chat("web-1")
    pid = stack.webs["web-1"].process.pid
    agent_ids = [chat.new_agent(f"streams-{index}", model=MODEL) for index in range(args.agents)]
    session = chat.login()
    cookies = "; ".join(f"{name}={value}" for name, value in session.cookies.items())
    idle = rss_mib(pid)

    async def scenario() -> tuple[float, float, int]:
        sockets = await open_streams(chat, cookies, agent_ids, args.streams)
        opened = rss_mib(pid)
        # One run per agent, each streamed to every tab open on that agent.
        with chat.api() as api:
            for agent_id in agent_ids:
                api.post(
                    f"/v1/agents/{agent_id}/messages/async", json={"messages": [{"role": "user", "content": "hello"}]}
                ).raise_for_status()
        frames = await asyncio.gather(*(drain_until_finished(socket) for socket in sockets))
        streamed = rss_mib(pid)
        await asyncio.gather(*(socket.close() for socket in sockets))
        return opened, streamed, sum(frames)

    opened, streamed, frames = asyncio.run(scenario())
    print(f"| web process, idle (after {args.agents} agents were created) | {idle:.1f} MiB |")
    print(f"| web process, {args.streams} chat streams open over {args.agents} agents | {opened:.1f} MiB |")
    print(f"| web process, after a run streamed to all of them ({frames} frames) | {streamed:.1f} MiB |")
    print(f"  per open stream: {(opened - idle) * 1024 / args.streams:.1f} KiB")


def run_many(chat: ChatServer, agent_ids: list[str], total: int) -> tuple[int, int]:
    """``total`` background runs, one at a time per agent; (completed, other outcomes)."""
    counts = {"completed": 0, "other": 0}
    lock = threading.Lock()
    todo = iter(range(total))

    def next_turn() -> bool:
        with lock:
            return next(todo, None) is not None

    def agent_loop(agent_id: str) -> None:
        with httpx.Client(
            base_url=chat.url, headers={"Authorization": f"Bearer {chat.demo_api_key}"}, timeout=60
        ) as api:
            while next_turn():
                body = {"messages": [{"role": "user", "content": "hello"}]}
                run = api.post(f"/v1/agents/{agent_id}/messages/async", json=body).raise_for_status().json()
                while run["status"] not in FINISHED:
                    time.sleep(0.02)
                    run = api.get(f"/v1/runs/{run['id']}").raise_for_status().json()
                with lock:
                    counts["completed" if run["status"] == "completed" else "other"] += 1

    in_threads(agent_loop, agent_ids)
    return counts["completed"], counts["other"]


def measure_worker(stack: ProcessStack, args: argparse.Namespace) -> None:
    chat = stack.chat("web-1")
    pid = stack.workers["worker-1"].process.pid
    agent_ids = [chat.new_agent(f"runs-{index}", model=MODEL) for index in range(args.concurrency)]
    run_many(chat, agent_ids, WARM_UP_RUNS)
    warm = rss_mib(pid)
    rows = [f"| worker after {WARM_UP_RUNS} warm-up runs | {warm:.1f} MiB |"]
    done = WARM_UP_RUNS
    for _ in range(2):
        started = time.monotonic()
        completed, other = run_many(chat, agent_ids, args.runs)
        seconds = time.monotonic() - started
        done += args.runs
        rows.append(
            f"| worker after {done} runs | {rss_mib(pid):.1f} MiB | "
            f"{completed} completed, {other} not, {args.runs / seconds:.1f} runs/s |"
        )
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--agents", type=int, default=50, help="agents the streams are spread over")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8, help="agents sending runs at once")
    parser.add_argument("--only", default="web,worker")
    args = parser.parse_args()

    with fake_model() as model_url, tempfile.TemporaryDirectory() as folder_name:
        env = {
            "ANTHROPIC_BASE_URL": model_url,
            "ANTHROPIC_API_KEY": "sk-ant-bench",
            "LOG_LEVEL": "WARNING",
            "API_RATE_LIMIT": "1000000/minute",
        }
        with started_stack(
            Path(folder_name), postgres=args.postgres, redis=args.redis, web=1, workers=1, extra_env=env
        ) as stack:
            print(f"1 web process, 1 worker (solo pool), Postgres + Redis; load average {load()}")
            print("| measure | resident memory | detail |")
            print("|---|---|---|")
            if "web" in args.only:
                measure_web(stack, args)
            if "worker" in args.only:
                measure_worker(stack, args)
            print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
