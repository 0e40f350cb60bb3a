"""Per-call overhead of the tool sandbox: N calls of a trivial tool, median / p90 / p99 in ms.

    .venv/bin/python benchmarks/bench_sandbox.py [--calls 200] [--backend bubblewrap|process|all]

For scale it also times a bare ``python -I -S -c pass`` (the interpreter start every
call pays) and a call through ``DefaultToolRunner`` (argument validation and packaging
on top of the sandbox). Needs no database: Django is set up with the test settings only
because the tool runner's module imports the tools' models.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()

from tools.base import ToolContext, ToolSpec
from tools.runtime import DefaultToolRunner
from tools.sandbox.base import SandboxBackend, SandboxLimits
from tools.sandbox.bubblewrap import BubblewrapBackend
from tools.sandbox.process import ProcessBackend
from tools.sandbox.selection import DEFAULT_UID_BASE, DEFAULT_UID_COUNT, default_python, default_state_dir
from tools.sandbox.uids import UidPool
from tools.schema import derive_tool_schema

SOURCE = '''def ping(n: int) -> str:
    """Answer.

    Args:
        n: A number.
    """
    return f"pong {n}"
'''
WARMUP = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--backend", choices=["bubblewrap", "process", "all"], default="bubblewrap")
    options = parser.parse_args()
    asyncio.run(_run(options.calls, options.backend))


async def _run(calls: int, which: str) -> None:
    python = default_python()
    pool = UidPool(base=DEFAULT_UID_BASE, count=DEFAULT_UID_COUNT, lock_dir=Path(default_state_dir()))
    pool_or_none = pool if os.geteuid() == 0 else None
    _say(f"{calls} calls each, after {WARMUP} warm-up calls; python {python}; uid {os.geteuid()}")
    await _report("bare interpreter start (python -I -S -c pass)", calls, lambda: _bare_start(python))

    backends: list[SandboxBackend] = []
    if which in {"bubblewrap", "all"}:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            sys.exit("bwrap is not installed: apt-get install bubblewrap")
        backends.append(BubblewrapBackend(bwrap=bwrap, python=python, uid_pool=pool_or_none))
    if which in {"process", "all"} and pool_or_none is not None:
        backends.append(ProcessBackend(python="/usr/bin/python3", uid_pool=pool_or_none))

    limits = SandboxLimits()
    schema = derive_tool_schema(SOURCE)
    spec = ToolSpec(name="ping", kind="source", json_schema=schema, source_code=SOURCE)
    context = ToolContext(organization_id=None, agent_id=None, env_vars={"EXAMPLE": "1"})
    for backend in backends:
        result = await backend.execute(SOURCE, "ping", {"n": 1}, {}, limits)
        assert result.ok and result.value == "pong 1", result
        await _report(f"{backend.name}: backend.execute", calls, lambda b=backend: _execute(b, limits))
        runner = DefaultToolRunner(sandbox=backend, limits=limits)
        await _report(f"{backend.name}: DefaultToolRunner.run", calls, lambda r=runner: _run_tool(r, spec, context))


async def _bare_start(python: str) -> None:
    process = await asyncio.create_subprocess_exec(python, "-I", "-S", "-c", "pass")
    await process.wait()


async def _execute(backend: SandboxBackend, limits: SandboxLimits) -> None:
    result = await backend.execute(SOURCE, "ping", {"n": 7}, {}, limits)
    if not result.ok:
        raise RuntimeError(result.error)


async def _run_tool(runner: DefaultToolRunner, spec: ToolSpec, context: ToolContext) -> None:
    outcome = await runner.run(spec, '{"n": "7"}', context)
    if outcome.status != "success":
        raise RuntimeError(outcome.tool_return)


async def _report(label: str, calls: int, call: Callable[[], Awaitable[None]]) -> None:
    for _ in range(WARMUP):
        await call()
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    p90 = timings[int(len(timings) * 0.9) - 1]
    p99 = timings[max(int(len(timings) * 0.99) - 1, 0)]
    _say(f"{label:48} median {statistics.median(timings):6.1f} ms   p90 {p90:6.1f} ms   p99 {p99:6.1f} ms")


def _say(line: str) -> None:
    sys.stdout.write(f"{line}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
