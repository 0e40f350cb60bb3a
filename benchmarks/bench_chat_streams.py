"""Many browser chats at once: N logged-in WebSockets, each on its own agent, each running a streamed turn.

Starts Daphne with the demo organization seeded (embedded default: in-process runs, in-memory
channel layer, the demo model streaming token by token), opens the sockets, sends one message on
each at the same moment, and prints errors, time to first token and time to the end of the run.
Asserts nothing. Run from the project folder:

    .venv/bin/python benchmarks/bench_chat_streams.py [--streams 200]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()

from tests.chat.conftest import ChatServer, live_socket, start_chat_server


async def one_chat(chat: ChatServer, session, agent_id: str, start: asyncio.Event) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    async with live_socket(chat, session, agent_id) as socket:
        await socket.send({"type": "resume", "after_seq": 0})
        await socket.until(lambda frame: frame.get("type") == "sync")
        await start.wait()
        began = time.perf_counter()
        await socket.send({"type": "send", "text": "Tell me something.", "otid": os.urandom(8).hex()})
        first = await socket.until(lambda frame: frame.get("type") in ("text_delta", "error"), timeout=120)
        if first[-1].get("type") == "error":
            raise RuntimeError(first[-1].get("detail"))
        first_token = time.perf_counter() - began
        await socket.until(lambda frame: frame.get("type") == "run_finished", timeout=300)
        return first_token, time.perf_counter() - began


async def run(chat: ChatServer, streams: int) -> None:
    session = chat.login()
    agents = [chat.new_agent(f"stream-{i}", tools=()) for i in range(streams)]
    start = asyncio.Event()
    tasks = [asyncio.create_task(one_chat(chat, session, agent_id, start)) for agent_id in agents]
    await asyncio.sleep(2)  # let every socket connect and sync
    began = time.perf_counter()
    start.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.perf_counter() - began
    done = [r for r in results if not isinstance(r, BaseException)]
    errors = [r for r in results if isinstance(r, BaseException)]
    print(f"{streams} concurrent chat streams: {len(done)} finished, {len(errors)} errors, {elapsed:.1f} s in all")
    if done:
        first = sorted(f * 1000 for f, _ in done)
        total = sorted(t * 1000 for _, t in done)
        print(f"first token: p50={statistics.median(first):.0f} ms p90={first[int(0.9 * (len(first) - 1))]:.0f} ms")
        print(f"whole turn:  p50={statistics.median(total):.0f} ms p90={total[int(0.9 * (len(total) - 1))]:.0f} ms")
    for error in errors[:3]:
        print(f"error: {type(error).__name__}: {error}")
    with contextlib.suppress(Exception):
        session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=200)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        start_chat_server(Path(folder), extra_env={"LOG_LEVEL": "WARNING"}) as chat,
    ):
        asyncio.run(run(chat, args.streams))


if __name__ == "__main__":
    main()
