"""Turns as an integrator sees them: ``letta-client`` 0.1.324 against a running server (DESIGN §10).

Prints figures; asserts nothing. Each agent is fresh, is created as a
``letta_v1_agent`` (the loop every agent here runs; Letta's own default is
``memgpt_v2_agent``, so the type is named for both servers to run the same loop), has
one source tool (``roll_die``) and no base tools, and uses the Anthropic path against
the fake model over HTTP. Scenarios (``--only``, comma-separated, all by default):

- ``text``: blocking ``client.agents.messages.create`` with a plain message, p50/p90/p99;
- ``tool``: the same with one sandboxed call of ``roll_die`` (two model calls, one tool run);
- ``concurrent``: ``--agents`` agents at once (one client thread each) for ``--seconds``: turns/s, errors.

Against a running server (``multiprocess.py`` fills these in)::

    .venv/bin/python benchmarks/bench_sdk_turns.py --base-url URL --api-key KEY \\
        --only concurrent --agents 8,32 --seconds 15

or with a stack of its own (the fake model, Daphne, and on Postgres a Celery worker)::

    .venv/bin/python benchmarks/bench_sdk_turns.py --stack sqlite
    .venv/bin/python benchmarks/bench_sdk_turns.py --stack postgres \\
        --postgres postgres://postgres@127.0.0.1:5432/agentserver_bench --redis redis://127.0.0.1:6379/5

Why this and not only ``bench_turns.py``: that script posts a bare JSON body with
``httpx`` to an agent without tools, on the embedded settings (no Redis, no worker).
An integrator's turn costs more: the SDK builds and validates pydantic models on
both sides and sends its own headers; the agent carries a tool, so every model request
holds its schema; with Redis configured the stream-slot cache, the channel layer (every
event is published to the agent's group) and the throttle counters are network round
trips; and a Celery worker shares the cores. The figures here are the ones to compare
with DESIGN §10's budgets and with Letta's.

``--profile FILE`` records the web process with py-spy (raw collapsed stacks) while the
scenarios run; ``benchmarks/flame_summary.py FILE`` reduces it to a table.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import DICE, ROOT, fake_model, in_threads, load, percentile

if TYPE_CHECKING:
    from collections.abc import Iterator

MODEL = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"
TOOL_PROMPT = "Call the roll_die with a 6-sided dice."


@dataclass
class Target:
    base_url: str
    api_key: str
    web_pid: int | None = None
    description: str = "a running server"
    database_url: str | None = None  # the stack's own Postgres database: transactions per turn are counted there


def report(label: str, latencies: list[float], started_load: str, transactions: str = "") -> None:
    ms = [value * 1000 for value in latencies]
    print(
        f"{label}: n={len(ms)} p50={statistics.median(ms):.1f} ms p90={percentile(ms, 0.9):.1f} ms "
        f"p99={percentile(ms, 0.99):.1f} ms max={max(ms):.1f} ms{transactions} (load {started_load} -> {load()})",
        flush=True,
    )


def committed_transactions(database_url: str | None) -> int | None:
    """Transactions the database has ended so far (``pg_stat_database``), once its statistics are flushed."""
    if database_url is None:
        return None
    import psycopg

    time.sleep(1.2)  # backends flush their counters at most once a second
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else None


@contextlib.contextmanager
def counting_transactions(target: Target, turns: int) -> Iterator[list[str]]:
    """Yields a one-item list that holds ``, N transactions/turn`` afterwards (empty without a database)."""
    text = [""]
    before = committed_transactions(target.database_url)
    yield text
    after = committed_transactions(target.database_url)
    if before is not None and after is not None:
        text[0] = f" {(after - before - 1) / turns:.1f} transactions/turn"  # less this count's own reading


def client_for(target: Target) -> Any:
    from letta_client import Letta

    return Letta(base_url=target.base_url, token=target.api_key, timeout=120)


def dice_tool_id(client: Any) -> str:
    return str(client.tools.upsert(source_code=DICE).id)


def fresh_agent(client: Any, name: str, tool_id: str) -> str:
    agent = client.agents.create(
        name=name,
        agent_type="letta_v1_agent",
        model=MODEL,
        embedding=EMBEDDING,
        tool_ids=[tool_id],
        include_base_tools=False,
    )
    return str(agent.id)


def send(client: Any, agent_id: str, text: str) -> float:
    from letta_client import MessageCreate

    started = time.perf_counter()
    response = client.agents.messages.create(agent_id=agent_id, messages=[MessageCreate(role="user", content=text)])
    elapsed = time.perf_counter() - started
    reason = response.stop_reason.stop_reason if response.stop_reason else None
    if reason != "end_turn":
        raise RuntimeError(f"unexpected stop reason: {reason}")
    return elapsed


def sequential(
    client: Any, agent_id: str, text: str, turns: int, *, warm_up: int = 10, seconds: float = 900.0
) -> list[float]:
    """``turns`` turns one after another (after ``warm_up`` more), or fewer if ``seconds`` run out first."""
    for _ in range(warm_up):
        send(client, agent_id, text)  # warm up connections, caches and the sandbox
    deadline = time.perf_counter() + seconds
    latencies: list[float] = []
    while len(latencies) < turns and time.perf_counter() < deadline:
        latencies.append(send(client, agent_id, text))
    return latencies


def concurrent(target: Target, agent_ids: list[str], seconds: float) -> tuple[int, int, float, list[float]]:
    """Each agent's own client sends turns back to back until the deadline."""
    done, errors, latencies = [0], [0], []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker(agent_id: str) -> None:
        client = client_for(target)
        while time.perf_counter() < deadline:
            try:
                elapsed = send(client, agent_id, "hello")
            except Exception as exc:  # counted and reported, never fatal for a benchmark
                with lock:
                    errors[0] += 1
                    if errors[0] <= 3:
                        print(f"  error: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            with lock:
                done[0] += 1
                latencies.append(elapsed)

    elapsed = in_threads(worker, agent_ids)
    return done[0], errors[0], elapsed, latencies


def run_scenarios(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """Runs and prints the scenarios; their raw figures (``text``/``tool``: latencies, ``agents``: per count)."""
    only = set(args.only.split(","))
    results: dict[str, Any] = {"agents": {}}
    client = client_for(target)
    tool_id = dice_tool_id(client)
    print(f"{target.description}; letta-client 0.1.324, fake Anthropic model over HTTP; load {load()}", flush=True)
    with profiling(target, args.profile):
        if "text" in only:
            agent_id = fresh_agent(client, "bench-sdk-text", tool_id)
            sequential(client, agent_id, "hello", 0)
            started_load = load()
            with counting_transactions(target, args.turns) as transactions:
                latencies = sequential(client, agent_id, "hello", args.turns, warm_up=0, seconds=args.max_seconds)
            report("blocking text turn", latencies, started_load, transactions[0])
            results["text"] = latencies
            results["text_load"] = started_load
        if "tool" in only:
            agent_id = fresh_agent(client, "bench-sdk-tool", tool_id)
            sequential(client, agent_id, TOOL_PROMPT, 0)
            started_load = load()
            with counting_transactions(target, args.tool_turns) as transactions:
                latencies = sequential(
                    client, agent_id, TOOL_PROMPT, args.tool_turns, warm_up=0, seconds=args.max_seconds
                )
            report("turn with one sandboxed tool call", latencies, started_load, transactions[0])
            results["tool"] = latencies
            results["tool_load"] = started_load
        if "concurrent" in only:
            for count in (int(value) for value in args.agents.split(",")):
                agents = [fresh_agent(client, f"bench-sdk-{count}-{i}", tool_id) for i in range(count)]
                started_load = load()
                done, errors, elapsed, latencies = concurrent(target, agents, args.seconds)
                p50 = statistics.median(latencies) * 1000 if latencies else float("nan")
                print(
                    f"{count} agents at once: {done / elapsed:.1f} turns/s ({done} turns in {elapsed:.1f} s), "
                    f"{errors} errors, turn p50 {p50:.0f} ms (load {started_load} -> {load()})",
                    flush=True,
                )
                results["agents"][count] = {
                    "turns_per_second": done / elapsed,
                    "turns": done,
                    "errors": errors,
                    "p50_ms": p50,
                    "load": started_load,
                }
    return results


@contextlib.contextmanager
def profiling(target: Target, output: str | None) -> Iterator[None]:
    """py-spy samples the web process (every thread, without pausing it) while the scenarios run."""
    if not output:
        yield
        return
    if target.web_pid is None:
        raise SystemExit("--profile needs a stack started by this script (or --web-pid)")
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    process = subprocess.Popen(
        [
            py_spy,
            "record",
            "--pid",
            str(target.web_pid),
            "--format",
            "raw",
            "--rate",
            "100",
            "--nonblocking",
            "-o",
            output,
        ]
    )
    time.sleep(1.0)
    try:
        yield
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)


@contextlib.contextmanager
def own_stack(args: argparse.Namespace) -> Iterator[Target]:
    """The fake model, one Daphne process and, on Postgres+Redis, one Celery worker, on a fresh database."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from tests.crossprocess.stack import process_stack
    from tests.support.databases import scratch_database
    from tests.support.live_server import start_live_server

    with fake_model() as model_url, tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        env = {"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "sk-ant-bench", "LOG_LEVEL": "WARNING"}
        env |= dict(item.split("=", 1) for item in args.server_env)
        if args.stack == "sqlite":
            os.environ.pop("LIVE_SERVER_DATABASE_URL", None)
            with start_live_server(folder, extra_env={**env, "REDIS_URL": "", "RUN_EXECUTOR": ""}) as server:
                pid = _listening_pid(server.url)
                yield Target(server.url, server.api_key, pid, "SQLite, in-memory layer, no worker, one Daphne")
            return
        os.environ["DATABASE_URL"] = args.postgres  # scratch_database creates its database beside this one
        with (
            scratch_database(folder) as database_url,
            process_stack(folder, database_url=database_url, redis_url=args.redis, extra_env=env) as stack,
        ):
            stack.start(webs=("web-1",), workers=("worker-1",))
            web = stack.webs["web-1"]
            yield Target(
                web.url, stack.api_key, web.process.pid, "Postgres+Redis, one Daphne, one Celery worker", database_url
            )


def _listening_pid(url: str) -> int | None:
    """The pid of the Daphne process serving ``url`` (``start_live_server`` does not hand it out)."""
    port = url.rsplit(":", 1)[1]
    result = subprocess.run(["pgrep", "-f", f"daphne -b 127.0.0.1 -p {port} "], capture_output=True, text=True)
    pids = result.stdout.split()
    return int(pids[0]) if pids else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", help="a running server; without it, --stack starts one")
    parser.add_argument("--api-key")
    parser.add_argument("--web-pid", type=int, help="the running server's pid, for --profile")
    parser.add_argument("--stack", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/agentserver_bench")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/5")
    parser.add_argument("--server-env", action="append", default=[], help="KEY=VALUE for the started processes")
    parser.add_argument("--only", default="text,tool,concurrent")
    parser.add_argument("--turns", type=int, default=300, help="text turns measured (after 10 to warm up)")
    parser.add_argument("--tool-turns", type=int, default=100)
    parser.add_argument("--agents", default="8,32", help="comma-separated agent counts")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--max-seconds", type=float, default=900.0, help="time bound of each sequential scenario")
    parser.add_argument("--profile", help="record the web process with py-spy into this raw file")
    args = parser.parse_args()

    if args.base_url:
        if not args.api_key:
            parser.error("--base-url needs --api-key")
        run_scenarios(Target(args.base_url, args.api_key, args.web_pid), args)
        return
    with own_stack(args) as target:
        run_scenarios(target, args)


if __name__ == "__main__":
    main()
