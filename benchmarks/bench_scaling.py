"""Turns per second as web processes are added: 8, 32 and 128 agents at once with 1, 2 and 4 Daphne processes.

For each web count it starts the stack of ``multiprocess.py`` (the fake Anthropic model, a
fresh Postgres database, that many Daphne processes, one Celery worker, nginx in front with
the repository's site), creates the agents once (fresh, one source tool, no base tools, the
Anthropic path) and drives the proxy as ``bench_sdk_turns.py``'s ``concurrent`` scenario
does: letta-client 0.1.324, one client thread per agent, blocking ``messages.create`` back
to back for ``--seconds``. Prints one line per run and a table at the end; asserts nothing::

    .venv/bin/python benchmarks/bench_scaling.py \\
        --postgres postgres://postgres@127.0.0.1:5432/agentserver_bench --redis redis://127.0.0.1:6379/5

The Postgres server is shared by every process: ``--connections`` (60 by default) is split
between the web processes as their pool size (``DATABASE_POOL_MAX_SIZE``). The client, nginx,
Postgres, Redis and the fake model run on the same machine as the servers, so on two cores
the gain from a second process is a floor. Needs ``nginx`` (Debian: ``nginx-light``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench_sdk_turns import Target, client_for, concurrent, dice_tool_id, fresh_agent
from harness import fake_model, load, percentile
from multiprocess import nginx, started_stack

from tests.crossprocess import stack as process_stack

# Four Daphne processes starting at once on a loaded two-core machine take longer than the tests allow.
process_stack.STARTUP_TIMEOUT_S = 240.0


@dataclass(frozen=True)
class Row:
    webs: int
    agents: int
    turns: int
    errors: int
    seconds: float
    p50_ms: float
    p99_ms: float
    load_before: str
    load_after: str

    @property
    def per_second(self) -> float:
        return self.turns / self.seconds


def measure(target: Target, webs: int, agent_counts: list[int], seconds: float) -> list[Row]:
    client = client_for(target)
    tool_id = dice_tool_id(client)
    agents = [fresh_agent(client, f"bench-scale-{i}", tool_id) for i in range(max(agent_counts))]
    rows = []
    for count in agent_counts:
        started_load = load()
        done, errors, elapsed, latencies = concurrent(target, agents[:count], seconds)
        ms = [value * 1000 for value in latencies] or [float("nan")]
        row = Row(webs, count, done, errors, elapsed, statistics.median(ms), percentile(ms, 0.99), started_load, load())
        print(
            f"{webs} web, {count} agents: {row.per_second:.1f} turns/s ({done} in {elapsed:.1f} s), {errors} errors, "
            f"p50 {row.p50_ms:.0f} ms p99 {row.p99_ms:.0f} ms (load {row.load_before} -> {row.load_after})",
            flush=True,
        )
        rows.append(row)
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| web processes | agents at once | turns/s | errors | turn p50 / p99 | load average before -> after |",
        "|---:|---:|---:|---:|---|---|",
    ]
    lines += [
        f"| {row.webs} | {row.agents} | {row.per_second:.1f} | {row.errors} | "
        f"{row.p50_ms:.0f} / {row.p99_ms:.0f} ms | {row.load_before} -> {row.load_after} |"
        for row in rows
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", required=True, help="a Postgres URL; a fresh database is created beside it")
    parser.add_argument("--redis", required=True, help="a Redis URL (channel layer, cache and Celery broker)")
    parser.add_argument("--webs", default="1,2,4", help="comma-separated counts of Daphne processes")
    parser.add_argument("--agents", default="8,32,128", help="comma-separated counts of agents at once")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--connections", type=int, default=60, help="Postgres connections shared by the web processes")
    parser.add_argument("--server-env", action="append", default=[], help="KEY=VALUE for every process")
    args = parser.parse_args()
    agent_counts = [int(value) for value in args.agents.split(",")]

    rows: list[Row] = []
    for webs in (int(value) for value in args.webs.split(",")):
        with fake_model() as model_url, tempfile.TemporaryDirectory() as folder_name:
            folder = Path(folder_name)
            env = {
                "ANTHROPIC_BASE_URL": model_url,
                "ANTHROPIC_API_KEY": "sk-ant-bench",
                "LOG_LEVEL": "WARNING",
                "API_RATE_LIMIT": "1000000/minute",
                "DATABASE_POOL_MAX_SIZE": str(max(4, args.connections // webs)),
            }
            env |= dict(item.split("=", 1) for item in args.server_env)
            with (
                started_stack(
                    folder, postgres=args.postgres, redis=args.redis, web=webs, workers=1, extra_env=env
                ) as stack,
                nginx(folder, [web.url for web in stack.webs.values()], workers=1) as base_url,
            ):
                print(f"{webs} web process(es) behind nginx at {base_url}; load {load()}", flush=True)
                rows += measure(Target(base_url, stack.api_key), webs, agent_counts, args.seconds)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
