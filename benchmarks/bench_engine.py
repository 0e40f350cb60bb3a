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

import asyncio
import statistics

from harness import (
    InstantModel,
    add_history,
    bench_organization,
    in_process_django,
    in_process_parser,
    percentile,
    timed_turn,
)


def main() -> None:
    parser = in_process_parser(__doc__, histories=[100, 10_000])
    parser.add_argument("--context", type=int, default=100)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    counter = in_process_django(args.postgres)
    from django.db import connections

    from agents import services
    from agents.models import Agent, Message, Run

    organization = bench_organization()
    model = InstantModel()
    database = connections["default"].vendor
    print(f"database: {database}; zero-latency in-process model; context window: last {args.context} rows")

    for history in args.histories:
        agent = services.agent_create(organization=organization, name=f"h{history}", model="demo/echo-1")
        start = add_history(agent, history)
        Agent.objects.filter(pk=agent.pk).update(context_start_seq=max(0, start + history - args.context))
        agent.refresh_from_db()

        async def one_turn(agent=agent) -> float:
            # Keep the window at the last ``--context`` rows, as a summarizer would (not timed).
            last = await Message.objects.filter(agent=agent).order_by("-seq").values_list("seq", flat=True).afirst()
            await Agent.objects.filter(pk=agent.pk).aupdate(context_start_seq=max(0, last + 1 - args.context))
            run = await Run.objects.acreate(organization_id=agent.organization_id, agent=agent)
            queries_before = counter.count
            elapsed = await timed_turn(run, "hello", model)
            counter.per_turn.append(counter.count - queries_before)
            return elapsed

        async def measure(agent=agent) -> tuple[list[float], float]:
            for _ in range(10):
                await one_turn()
            counter.per_turn.clear()
            timings = [await one_turn() for _ in range(args.turns)]
            return timings, statistics.mean(counter.per_turn)

        timings, queries = asyncio.run(measure())
        ms = [t * 1000 for t in timings]
        print(
            f"history {history:>6} rows: overhead per step p50={statistics.median(ms):.2f} ms "
            f"p90={percentile(ms, 0.9):.2f} ms; queries per step={queries:.1f}"
        )


if __name__ == "__main__":
    main()
