"""Turn latency and throughput through the API (DESIGN §10), against a zero-latency model over HTTP.

Starts the fake Anthropic server and a Daphne server on its own database, then
prints figures; it asserts nothing. Run from the project folder:

    .venv/bin/python benchmarks/bench_turns.py [--turns 200] [--agents 32] [--seconds 10]

Set LIVE_SERVER_DATABASE_URL=postgres://postgres@127.0.0.1:5432/agentserver_bench (an existing,
emptied database) to measure on Postgres; the default is a SQLite file.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()
logging.getLogger("httpx").setLevel(logging.WARNING)

from harness import DICE, fake_model, in_threads, percentile

from tests.support.live_server import start_live_server


def report(label: str, latencies: list[float]) -> None:
    ms = [v * 1000 for v in latencies]
    print(
        f"{label}: n={len(ms)} p50={statistics.median(ms):.1f} ms "
        f"p90={percentile(ms, 0.9):.1f} ms p99={percentile(ms, 0.99):.1f} ms"
    )


def create_agent(http: httpx.Client, name: str, tool_ids: list[str]) -> str:
    response = http.post(
        "/v1/agents/",
        json={"name": name, "model": "anthropic/claude-sonnet-4-5-20250929", "tool_ids": tool_ids},
    )
    response.raise_for_status()
    return response.json()["id"]


def send(http: httpx.Client, agent_id: str, text: str) -> float:
    started = time.perf_counter()
    response = http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    body = response.json()
    if body["stop_reason"]["stop_reason"] != "end_turn":
        raise RuntimeError(f"unexpected stop reason: {body['stop_reason']}")
    return elapsed


def sequential(http: httpx.Client, agent_id: str, text: str, turns: int) -> list[float]:
    for _ in range(10):
        send(http, agent_id, text)  # warm up connections and caches
    return [send(http, agent_id, text) for _ in range(turns)]


def concurrent(url: str, key: str, agent_ids: list[str], seconds: float) -> tuple[int, int, float]:
    done, errors = [0], [0]
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker(agent_id: str) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            while time.perf_counter() < deadline:
                try:
                    send(http, agent_id, "hello")
                    with lock:
                        done[0] += 1
                except Exception:  # counted and reported, never fatal for a benchmark
                    with lock:
                        errors[0] += 1

    elapsed = in_threads(worker, agent_ids)
    return done[0], errors[0], elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--agents", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()

    with fake_model() as model_url, tempfile.TemporaryDirectory() as folder:
        env = {"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "sk-ant-bench", "LOG_LEVEL": "WARNING"}
        with start_live_server(Path(folder), extra_env=env) as server:
            headers = {"Authorization": f"Bearer {server.api_key}"}
            with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
                dice = http.put("/v1/tools/", json={"source_code": DICE}).json()["id"]
                text_agent = create_agent(http, "bench-text", [])
                tool_agent = create_agent(http, "bench-tool", [dice])
                print(f"database: {server.env['DATABASE_URL'].split('://')[0]}; model: fake Anthropic over HTTP")
                report("blocking text turn", sequential(http, text_agent, "hello", args.turns))
                report(
                    "turn with one sandboxed tool call",
                    sequential(http, tool_agent, "Call the roll_die with a 6-sided dice.", max(20, args.turns // 4)),
                )
                agents = [create_agent(http, f"bench-{i}", []) for i in range(args.agents)]
            done, errors, elapsed = concurrent(server.url, server.api_key, agents, args.seconds)
            print(f"{args.agents} agents at once: {done / elapsed:.1f} turns/s over {elapsed:.1f} s, {errors} errors")


if __name__ == "__main__":
    main()
