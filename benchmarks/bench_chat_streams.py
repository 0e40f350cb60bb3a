"""Many browser chats at once: N logged-in WebSockets, each on its own agent, each running a streamed turn.

Starts Daphne with the demo organization seeded, opens the sockets, sends one message on each at
the same moment, and prints errors, time to first token, time to the end of the run and the
token-to-browser latency: for every streamed token frame, the time it arrived at the socket less
the ``emitted_at`` the executor stamped on it when it let the token go (same machine, same
clock). Asserts nothing. Run from the project folder:

    .venv/bin/python benchmarks/bench_chat_streams.py [--streams 200]
    .venv/bin/python benchmarks/bench_chat_streams.py --streams 200 --workers 2 \
        --postgres postgres://postgres@127.0.0.1:5432/agentserver --redis redis://127.0.0.1:6379/3

Without ``--postgres`` it is the embedded default (SQLite, in-process runs, in-memory channel
layer); with it, one Daphne process and ``--workers`` Celery workers (one run at a time each)
on a fresh Postgres database and Redis, so every token crosses from a worker through Redis to
the web process and the socket. The demo model streams its tokens ``DEMO_TOKEN_DELAY`` apart.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()

from tests.support.live_chat import ChatServer, live_socket, start_chat_server

DELTAS = ("text_delta", "reasoning_delta")


async def one_chat(  # type: ignore[no-untyped-def]
    chat: ChatServer, session, agent_id: str, start: asyncio.Event, token_latencies: list[float]
) -> tuple[float, float]:
    def arrived(frame: dict) -> None:  # type: ignore[type-arg]
        if frame.get("type") in DELTAS and "emitted_at" in frame:
            token_latencies.append(time.time() - frame["emitted_at"])

    async with live_socket(chat, session, agent_id) as socket:
        await socket.send({"type": "resume", "after_seq": 0})
        await socket.until(lambda frame: frame.get("type") == "sync")
        await start.wait()
        began = time.perf_counter()
        await socket.send({"type": "send", "text": "Tell me something.", "otid": os.urandom(8).hex()})
        first = await socket.until(
            lambda frame: arrived(frame) or frame.get("type") in ("text_delta", "error"), timeout=120
        )
        if first[-1].get("type") == "error":
            raise RuntimeError(first[-1].get("detail"))
        first_token = time.perf_counter() - began
        await socket.until(lambda frame: arrived(frame) or frame.get("type") == "run_finished", timeout=600)
        return first_token, time.perf_counter() - began


def percentiles(values: list[float]) -> str:
    ordered = sorted(value * 1000 for value in values)
    p50, p90, p99 = (ordered[min(len(ordered) - 1, int(f * len(ordered)))] for f in (0.5, 0.9, 0.99))
    return f"p50={p50:.0f} ms p90={p90:.0f} ms p99={p99:.0f} ms max={ordered[-1]:.0f} ms"


async def run(chat: ChatServer, streams: int) -> int:
    """Run the streams; return how many failed."""
    session = chat.login()
    agents = [chat.new_agent(f"stream-{i}", tools=()) for i in range(streams)]
    start, token_latencies = asyncio.Event(), []
    tasks = [asyncio.create_task(one_chat(chat, session, agent_id, start, token_latencies)) for agent_id in agents]
    await asyncio.sleep(2)  # let every socket connect and sync
    began = time.perf_counter()
    start.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.perf_counter() - began
    done = [r for r in results if not isinstance(r, BaseException)]
    errors = [r for r in results if isinstance(r, BaseException)]
    print(f"{streams} concurrent chat streams: {len(done)} finished, {len(errors)} errors, {elapsed:.1f} s in all")
    if done:
        print(f"first token:      {percentiles([first for first, _ in done])}")
        print(f"whole turn:       {percentiles([total for _, total in done])}")
    if token_latencies:
        print(f"token to socket:  {percentiles(token_latencies)} over {len(token_latencies)} token frames")
    for error in errors[:3]:
        print(f"error: {type(error).__name__}: {error}")
    with contextlib.suppress(Exception):
        session.close()
    return len(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--postgres", help="a Postgres URL: run on a fresh database beside it, with workers")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/3", help="with --postgres")
    parser.add_argument("--workers", type=int, default=2, help="Celery workers, with --postgres")
    args = parser.parse_args()
    env = {"LOG_LEVEL": "WARNING"}
    with tempfile.TemporaryDirectory() as folder:
        print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        if args.postgres is None:
            print("embedded default: one Daphne, SQLite, runs in-process, in-memory channel layer")
            with start_chat_server(Path(folder), extra_env=env) as chat:
                asyncio.run(run(chat, args.streams))
        else:
            from multiprocess import started_stack

            print(f"one Daphne, {args.workers} Celery worker(s), Postgres and Redis")
            with started_stack(
                Path(folder), postgres=args.postgres, redis=args.redis, web=1, workers=args.workers, extra_env=env
            ) as stack:
                if asyncio.run(run(stack.chat("web-1"), args.streams)):
                    log = stack.webs["web-1"].log()
                    first = log.find("Traceback")
                    print(log[first : first + 4000] if first >= 0 else log[-4000:])


if __name__ == "__main__":
    main()
