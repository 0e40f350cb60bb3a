"""What the benchmark scripts share: the fake model, percentiles, worker threads, and the in-process set-up.

Standard library only at import, so a script decides its settings before Django loads:
``in_process_django`` (for ``bench_engine.py`` and ``bench_long_conversation.py``) sets
Django up on a fresh database and counts every query from then on; ``InstantModel`` and
``timed_turn`` are their model and their one timed turn.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Iterator

ROOT = Path(__file__).resolve().parent.parent

DICE = '''
def roll_die(num_sides: int) -> str:
    """Roll a die.

    Args:
        num_sides: How many sides the die has.
    """
    return "4"
'''


def load() -> str:
    """The load averages, as the figures are printed with them."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def percentile(values: Iterable[float], fraction: float) -> float:
    """The nearest-rank value at ``fraction`` (0.9 for p90) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


@contextlib.contextmanager
def fake_model(*options: str) -> Iterator[str]:
    """The fake Anthropic server in a process of its own, so it competes with neither side for a GIL; its URL.

    ``options`` go to ``python -m tests.fake_llm`` (``--anthropic-model ID`` for Letta's side). It keeps
    no requests (``--no-record``): their bodies would grow its heap, and its collections' pauses
    would show in the turns' tail.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_llm", "--port", "0", "--no-record", *options],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        yield line.strip().rsplit(" ", 1)[-1]
    finally:
        process.terminate()
        process.wait(timeout=10)


def in_threads(worker: Callable[[str], None], agent_ids: list[str]) -> float:
    """Run ``worker(agent_id)`` for every agent at once, one thread each; the seconds until all are done."""
    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(agent_id,)) for agent_id in agent_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


class QueryCounter:
    """Counts the queries of every connection (an ``execute_wrapper``); ``per_turn`` is the caller's."""

    def __init__(self) -> None:
        self.count = 0
        self.per_turn: list[int] = []
        self._lock = threading.Lock()

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        with self._lock:
            self.count += 1
        return execute(sql, params, many, context)


def in_process_parser(description: str | None, *, histories: list[int]) -> argparse.ArgumentParser:
    """The options of an in-process benchmark: ``--postgres`` and the history lengths it measures."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--histories", type=int, nargs="+", default=histories)
    return parser


def in_process_django(postgres: bool) -> QueryCounter:
    """Django on a fresh, migrated database (a SQLite file, or ``BENCH_DATABASE`` on the local Postgres).

    The returned counter sees the queries of every connection, the engine's executor threads' too.
    """
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    _fresh_database(postgres)
    import django  # after DATABASE_URL is set: the settings read it

    django.setup()
    from django.core.management import call_command
    from django.db.backends.signals import connection_created

    call_command("migrate", verbosity=0)
    counter = QueryCounter()
    connection_created.connect(
        lambda sender, connection, **kwargs: connection.execute_wrappers.append(counter), weak=False
    )
    return counter


def add_history(agent: Any, rows: int) -> int:
    """Append ``rows`` alternating user and assistant messages to ``agent``; the seq of the first."""
    from tests.factories import append_history  # Django is set up by now (``in_process_django``)

    return append_history(agent, rows, lambda i: f"message {i} " + "lorem ipsum " * 8)


def bench_organization() -> Any:
    """A new organization for one run's agents."""
    from accounts.models import Organization  # Django is set up by now (``in_process_django``)

    return Organization.objects.create(name="bench", slug=f"bench-{uuid.uuid4().hex[:6]}")


class InstantModel:
    """A model that answers at once, in process: the text of ``answer(request)``, then a small usage."""

    provider = "instant"

    def answer(self, request: Any) -> str:
        return "Sure."

    async def generate(self, request: Any, *, stream: bool) -> AsyncIterator[Any]:
        from agents.llm.base import Completed, TextDelta, Usage  # Django is set up by now

        yield TextDelta(self.answer(request))
        yield Completed(finish_reason="stop", usage=Usage(prompt_tokens=10, completion_tokens=2))

    def build_payload(self, request: Any, *, stream: bool) -> dict[str, Any]:
        return {}


async def timed_turn(run: Any, text: str, llm: InstantModel) -> float:
    """The seconds from opening a turn of ``run`` on the user's ``text`` to its last event."""
    from agents.engine.inputs import UserInput  # Django is set up by now
    from agents.runs.turns import TurnSetup, open_turn

    began = time.perf_counter()
    turn = await open_turn(TurnSetup(run=run, turn_input=[UserInput(text)], llm=llm))
    async for _ in turn.events():
        pass
    return time.perf_counter() - began


def _fresh_database(postgres: bool) -> None:
    if postgres:
        import psycopg  # only the Postgres runs need it

        # BENCH_DATABASE names the (dropped and re-created) database, so two people can measure at once.
        name = os.environ.get("BENCH_DATABASE", "agentserver_bench")
        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{name}"
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"
