"""Garbage-collection pauses of the server's send path, measured with ``gc.callbacks``.

Serves ``config.asgi.application`` in this process (production settings, a SQLite
file, the fake Anthropic model over HTTP in a process of its own), sends blocking
text turns through it with ``httpx``'s ASGI transport, and times every collection
from its ``start`` to its ``stop`` callback. Prints, per generation, how many
collections ran, their pause p50/p99/max, and what they cost per turn, next to the
turns' own p50/p99. It asserts nothing. Run from the project folder::

    .venv/bin/python benchmarks/gc_probe.py [--turns 300]            # as the server runs (gc.freeze())
    .venv/bin/python benchmarks/gc_probe.py [--turns 300] --unfreeze # as it ran before gc.freeze()

``config/asgi.py`` freezes every object alive after startup (``gc.freeze()``), so
collections no longer walk Django's, the SDKs' and pydantic's long-lived objects;
``--unfreeze`` puts them back in the collector's generations to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from io import StringIO

from harness import DICE, ROOT, fake_model, load, percentile


class PauseProbe:
    """Times each collection, by generation, through ``gc.callbacks``."""

    def __init__(self) -> None:
        self.pauses: dict[int, list[float]] = defaultdict(list)
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses[info["generation"]].append(time.perf_counter() - self._started)

    def report(self, turns: int) -> None:
        for generation in sorted(self.pauses):
            ms = [value * 1000 for value in self.pauses[generation]]
            print(
                f"gen {generation}: {len(ms)} collections, pause p50={statistics.median(ms):.2f} ms "
                f"p99={percentile(ms, 0.99):.2f} ms max={max(ms):.2f} ms, {sum(ms) / turns:.2f} ms per turn"
            )


async def send_turns(application: object, api_key: str, turns: int) -> list[float]:
    import httpx

    transport = httpx.ASGITransport(app=application)  # type: ignore[arg-type]
    headers = {"Authorization": f"Bearer {api_key}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as http:
        tool = await http.put("/v1/tools/", json={"source_code": DICE})
        agent = await http.post(
            "/v1/agents/",
            json={
                "name": "gc-probe",
                "model": "anthropic/claude-sonnet-4-5-20250929",
                "tool_ids": [tool.json()["id"]],
                "include_base_tools": False,
            },
        )
        url = f"/v1/agents/{agent.json()['id']}/messages"
        body = {"messages": [{"role": "user", "content": "hello"}]}
        latencies = []
        for index in range(turns + 10):
            started = time.perf_counter()
            response = await http.post(url, json=body)
            response.raise_for_status()
            if index >= 10:  # the first ten warm up caches and connections
                latencies.append(time.perf_counter() - started)
        return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--unfreeze", action="store_true", help="undo config/asgi.py's gc.freeze() to compare")
    args = parser.parse_args()

    with fake_model() as model_url:
        folder = tempfile.mkdtemp(prefix="gc-probe-")
        os.environ.update(
            {
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "DATABASE_URL": f"sqlite:///{folder}/probe.sqlite3",
                "REDIS_URL": "",
                "SECRET_KEY": "gc-probe-secret-key-" + "k" * 40,
                "FIELD_ENCRYPTION_KEY": "gc-probe-field-encryption-key-" + "e" * 40,
                "ALLOWED_HOSTS": "127.0.0.1",
                "API_RATE_LIMIT": "100000/minute",
                "ANTHROPIC_BASE_URL": model_url,
                "ANTHROPIC_API_KEY": "sk-ant-probe",
                "LOG_LEVEL": "WARNING",
            }
        )
        sys.path.insert(0, str(ROOT))
        from django.core.management import call_command

        from config.asgi import application  # sets Django up, then freezes what startup left alive

        call_command("migrate", "--noinput", verbosity=0)
        output = StringIO()
        call_command(
            "create_api_key", "--org", "probe", "--email", "probe@example.com", "--name", "probe", stdout=output
        )
        api_key = output.getvalue().strip().splitlines()[-1]
        if args.unfreeze:
            gc.unfreeze()
        print(
            f"objects frozen: {gc.get_freeze_count()}, tracked: {len(gc.get_objects())},",
            f"thresholds {gc.get_threshold()}",
        )
        probe = PauseProbe()
        gc.callbacks.append(probe)
        started_load = load()
        latencies = asyncio.run(send_turns(application, api_key, args.turns))
        gc.callbacks.remove(probe)
        ms = [value * 1000 for value in latencies]
        print(
            f"{'unfrozen' if args.unfreeze else 'frozen'}: {len(ms)} blocking text turns in-process, "
            f"p50={statistics.median(ms):.1f} ms p99={percentile(ms, 0.99):.1f} ms max={max(ms):.1f} ms "
            f"(load {started_load} -> {load()})"
        )
        probe.report(len(ms))


if __name__ == "__main__":
    main()
