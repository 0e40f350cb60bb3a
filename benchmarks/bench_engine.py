"""Server overhead and database queries per step, with a zero-latency model, at two history lengths.

The model answers instantly in-process, so what is measured is our own work per step:
locking, loading the context, building the request, persisting rows, usage and timings.
Prints figures; asserts nothing. Run from the project folder:

    .venv/bin/python benchmarks/bench_engine.py                       # SQLite file
    .venv/bin/python benchmarks/bench_engine.py --postgres            # database agentserver_bench
    .venv/bin/python benchmarks/bench_engine.py --histories 100 10000 --turns 200

History rows beyond the context window stay stored but out of context (as after a
reset); the context holds the last ``--context`` rows.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


def configure(postgres: bool) -> None:
    if postgres:
        import psycopg

        # BENCH_DATABASE names the (dropped and re-created) database, so two people can measure at once.
        name = os.environ.get("BENCH_DATABASE", "agentserver_bench")
        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{name}"
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"


class QueryCounter:
    def __init__(self) -> None:
        self.count = 0
        self.per_turn: list[int] = []
        self._lock = threading.Lock()

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        with self._lock:
            self.count += 1
        return execute(sql, params, many, context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--histories", type=int, nargs="+", default=[100, 10_000])
    parser.add_argument("--context", type=int, default=100)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    configure(args.postgres)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections
    from django.db.backends.signals import connection_created

    from accounts.models import Organization
    from agents import services
    from agents.engine.inputs import UserInput
    from agents.llm.base import Completed, TextDelta, Usage
    from agents.models import Agent, Message, Run
    from agents.runs.turns import open_turn

    call_command("migrate", verbosity=0)

    class InstantModel:
        provider = "instant"

        async def generate(self, request, *, stream):  # type: ignore[no-untyped-def]
            yield TextDelta("Sure.")
            yield Completed(finish_reason="stop", usage=Usage(prompt_tokens=10, completion_tokens=2))

        def build_payload(self, request, *, stream):  # type: ignore[no-untyped-def]
            return {}

    organization = Organization.objects.create(name="bench", slug=f"bench-{uuid.uuid4().hex[:6]}")
    model = InstantModel()
    counter = QueryCounter()
    # The engine's queries run on asgiref's executor thread: count on every connection.
    connection_created.connect(
        lambda sender, connection, **kwargs: connection.execute_wrappers.append(counter), weak=False
    )
    database = connections["default"].vendor
    print(f"database: {database}; zero-latency in-process model; context window: last {args.context} rows")

    for history in args.histories:
        agent = services.agent_create(organization=organization, name=f"h{history}", model="demo/echo-1")
        start = Message.objects.filter(agent=agent).count()
        Message.objects.bulk_create(
            [
                Message(
                    organization=organization,
                    agent=agent,
                    seq=start + i,
                    role="user" if i % 2 == 0 else "assistant",
                    content=[{"type": "text", "text": f"message {i} " + "lorem ipsum " * 8}],
                )
                for i in range(history)
            ],
            batch_size=1000,
        )
        Agent.objects.filter(pk=agent.pk).update(context_start_seq=max(0, start + history - args.context))
        agent.refresh_from_db()

        async def one_turn(agent=agent) -> float:
            # Keep the window at the last ``--context`` rows, as a summarizer would (not timed).
            last = await Message.objects.filter(agent=agent).order_by("-seq").values_list("seq", flat=True).afirst()
            await Agent.objects.filter(pk=agent.pk).aupdate(context_start_seq=max(0, last + 1 - args.context))
            run = await Run.objects.acreate(organization_id=agent.organization_id, agent=agent)
            queries_before = counter.count
            began = time.perf_counter()
            turn = await open_turn(agent=agent, run=run, turn_input=[UserInput("hello")], llm=model)
            async for _ in turn.events():
                pass
            elapsed = time.perf_counter() - began
            counter.per_turn.append(counter.count - queries_before)
            return elapsed

        async def measure(agent=agent) -> tuple[list[float], float]:
            for _ in range(10):
                await one_turn()
            counter.per_turn.clear()
            timings = [await one_turn() for _ in range(args.turns)]
            return timings, statistics.mean(counter.per_turn)

        timings, queries = asyncio.run(measure())
        ms = sorted(t * 1000 for t in timings)
        print(
            f"history {history:>6} rows: overhead per step p50={statistics.median(ms):.2f} ms "
            f"p90={ms[int(0.9 * (len(ms) - 1))]:.2f} ms; queries per step={queries:.1f}"
        )


if __name__ == "__main__":
    main()
