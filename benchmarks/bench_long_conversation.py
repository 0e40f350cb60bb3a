"""Long conversations: per-turn overhead and queries per step at 1,000 and 10,000 rows of
history, with real compactions keeping a 4,000-token window, and what a compaction costs.

The model answers instantly in-process (a turn's answer, or a short summary when the
request is a compaction's), so what is measured is our own work: loading the context,
sizing the request, compacting, persisting. Prints figures; asserts nothing:

    .venv/bin/python benchmarks/bench_long_conversation.py               # SQLite file
    .venv/bin/python benchmarks/bench_long_conversation.py --postgres    # database agentserver_bench
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
    parser = in_process_parser(__doc__, histories=[1_000, 10_000])
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--window", type=int, default=4_000)
    args = parser.parse_args()
    counter = in_process_django(args.postgres)
    from django.db import connections

    from agents import services
    from agents.llm.tokens import request_tokens
    from agents.memory.compaction import store_compaction
    from agents.models import Agent, Run

    class SummarizingModel(InstantModel):
        """Answers a turn, or a compaction's request with a short summary; counts both and the largest request."""

        def __init__(self) -> None:
            self.largest = 0
            self.summaries = 0

        def answer(self, request) -> str:  # type: ignore[no-untyped-def]
            self.largest = max(self.largest, request_tokens(request))
            if request.purpose == "summary":
                self.summaries += 1
                return "The user and the assistant talked about lorem ipsum at length."
            return "Sure, here is a considered answer about lorem ipsum. " * 4

    organization = bench_organization()
    print(f"database: {connections['default'].vendor}; zero-latency in-process model; window {args.window} tokens")

    for history in args.histories:
        agent = services.agent_create(
            organization=organization, name=f"h{history}", model="demo/echo-1", context_window=args.window
        )
        start = add_history(agent, history)
        # As after earlier compactions: a summary heads the context, the last 20 rows follow it.
        store_compaction(
            agent_id=agent.pk,
            organization_id=organization.pk,
            run_id=None,
            seq=start + history,
            summary="Earlier, lorem ipsum.",
            keep_from_seq=start + history - 20,
            evicted=history - 20,
        )
        agent.refresh_from_db()
        model = SummarizingModel()

        async def one_turn(agent: Agent = agent, model: SummarizingModel = model) -> tuple[float, int, bool]:
            run = await Run.objects.acreate(organization_id=agent.organization_id, agent=agent)
            summaries, queries = model.summaries, counter.count
            seconds = await timed_turn(run, "tell me more " + "lorem " * 40, model)
            return seconds, counter.count - queries, model.summaries > summaries

        async def measure() -> list[tuple[float, int, bool]]:
            for _ in range(5):
                await one_turn()
            return [await one_turn() for _ in range(args.turns)]

        report(history, asyncio.run(measure()), turns=args.turns, window=args.window, largest=model.largest)


def report(history: int, results: list[tuple[float, int, bool]], *, turns: int, window: int, largest: int) -> None:
    """One line of figures from ``(seconds, queries, compacted)`` per turn."""
    plain = [(t * 1000, q) for t, q, compacted in results if not compacted]
    compacting = [(t * 1000, q) for t, q, compacted in results if compacted]
    ms = [t for t, _ in plain]
    print(
        f"history {history:>6} rows: per turn p50={statistics.median(ms):.2f} ms p90={percentile(ms, 0.9):.2f} ms, "
        f"queries per step={statistics.mean(q for _, q in plain):.1f}; "
        f"{len(compacting)} compactions in {turns} turns, a compacting turn "
        f"p50={statistics.median(t for t, _ in compacting):.2f} ms "
        f"with {statistics.mean(q for _, q in compacting):.1f} queries; "
        f"largest request {largest} tokens (estimate) of {window}"
        if compacting
        else f"history {history:>6} rows: p50={statistics.median(ms):.2f} ms; no compaction in {turns} turns"
    )


if __name__ == "__main__":
    main()
