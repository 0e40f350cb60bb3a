"""One sandboxed call as a child process: feed the request, cap what comes back, enforce the clock.

Both backends are a ``ChildBackend``; they differ only in the command line and in who
the child runs as (``ChildBackend.child``). The child starts in a session of its own, so
a timeout or an output overflow kills its whole process group. Output is read in chunks
against a byte budget and the child is killed as soon as the budget is spent, so printing
gigabytes costs at most the cap in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import marshal
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from tools.sandbox.base import ErrorKind, KiB, SandboxLimits, SandboxResult
from tools.sandbox.cgroups import CallCgroup, configured_parent, runner_limits

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

logger = logging.getLogger(__name__)

RUNNER_SOURCE = Path(__file__).with_name("runner.py").read_text()
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# What the launcher (bwrap or the interpreter) starts with. The tool's own variables
# travel inside the request and are installed by the runner, so they never reach a
# process that runs before the sandbox is in place (think LD_PRELOAD).
LAUNCH_ENV = {"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"}
DRAIN_SECONDS = 1.0
ENVELOPE_SLACK = 4 * KiB
_ERROR_KINDS = set(get_args(ErrorKind))


def sandbox_env(declared: dict[str, str], *, home: str) -> dict[str, str]:
    """The tool's whole environment: a minimal PATH/HOME/LANG plus the agent's declared variables."""
    return {"PATH": SANDBOX_PATH, "HOME": home, "LANG": "C.UTF-8", **declared}


def runner_command(python: str, result_fd: int, drop_to_uid: int | None) -> list[str]:
    """``-I`` ignores PYTHON* variables and the user site, ``-S`` skips site-packages."""
    uid = -1 if drop_to_uid is None else drop_to_uid
    return [python, "-I", "-S", "-B", "-u", "-c", RUNNER_SOURCE, str(result_fd), str(uid)]


def request_payload(
    source_code: str, function_name: str | None, arguments: dict[str, Any], env: dict[str, str], limits: SandboxLimits
) -> bytes:
    """The runner's request, as ``marshal`` data: it loads in no time without importing ``json``."""
    request = {
        "source": source_code,
        "function": function_name,
        "arguments": arguments,
        "env": env,
        "limits": runner_limits(limits, cgroup=configured_parent() is not None).for_runner(),
    }
    return marshal.dumps(request)


@dataclass(frozen=True)
class ChildSpec:
    argv_for: Callable[[int], list[str]]  # the command line, given the result pipe's fd
    cwd: str | None = None
    user: int | None = None  # run as this uid/gid with no supplementary groups
    signal_offset: bool = False  # the launcher reports a child killed by signal N as 128 + N
    cleanup: Callable[[], Awaitable[None]] | None = None  # kills what escaped the process group
    extra_fds: tuple[int, ...] = ()  # further fds the launcher reads (bwrap's seccomp program)


class ChildBackend:
    """A ``SandboxBackend`` that runs each call as a child process; a subclass says how to start it."""

    name: str

    async def execute(
        self,
        source_code: str,
        function_name: str | None,
        arguments: dict[str, Any],
        env: dict[str, str],
        limits: SandboxLimits,
    ) -> SandboxResult:
        async with self.child(limits) as (spec, home):
            payload = request_payload(source_code, function_name, arguments, sandbox_env(env, home=home), limits)
            return await run_child(spec, payload, limits)

    def child(self, limits: SandboxLimits) -> AbstractAsyncContextManager[tuple[ChildSpec, str]]:
        """How to start one call's child, and the tool's ``HOME`` in it; cleans up after the call."""
        raise NotImplementedError


async def run_child(spec: ChildSpec, payload: bytes, limits: SandboxLimits) -> SandboxResult:
    """Run one call, in a cgroup of its own when the host delegates one (``tools.sandbox.cgroups``)."""
    parent = configured_parent()
    if parent is None:
        return await _run_child(spec, payload, limits, None)
    try:
        cgroup = await asyncio.to_thread(CallCgroup.create, parent, limits)
    except OSError as exc:
        logger.error("Sandbox cgroup could not be created under %s: %s", parent, exc)
        return SandboxResult(
            ok=False, error="The sandbox could not start: no cgroup for the call.", error_kind="sandbox"
        )
    try:
        result = await _run_child(spec, payload, limits, cgroup)
        if not result.ok and result.error_kind == "crashed" and cgroup.memory_exhausted():
            message = (
                f"The tool's processes used more than their {_size(limits.memory_bytes)} of memory and were stopped."
            )
            return replace(result, error=message, error_kind="memory")
        return result
    finally:
        await asyncio.to_thread(cgroup.destroy)


async def _run_child(
    spec: ChildSpec, payload: bytes, limits: SandboxLimits, cgroup: CallCgroup | None
) -> SandboxResult:
    started = time.monotonic()
    # Every pipe is ours rather than asyncio's: Process.wait() then means "exited", not
    # "exited and every inheritor closed stdout", which a tool's stray child could delay forever.
    pipes = _Pipes()
    try:
        process = await asyncio.create_subprocess_exec(
            *spec.argv_for(pipes.fds["result_w"]),
            stdin=pipes.fds["stdin_r"],
            stdout=pipes.fds["stdout_w"],
            stderr=pipes.fds["stderr_w"],
            env=LAUNCH_ENV,
            cwd=spec.cwd,
            pass_fds=(pipes.fds["result_w"], *spec.extra_fds),
            start_new_session=True,
            preexec_fn=cgroup.join if cgroup is not None else None,
            **_identity(spec.user),
        )
    except OSError as exc:
        pipes.close_all()
        logger.error("Sandbox launch failed: %s", exc)
        return SandboxResult(ok=False, error=f"The sandbox could not start: {exc}", error_kind="sandbox")
    pipes.close_child_ends()

    output = _Budget(limits.max_output_bytes)
    result = _Budget(limits.max_result_bytes + ENVELOPE_SLACK)
    stdout, stderr, envelope = bytearray(), bytearray(), bytearray()
    transports: list[asyncio.BaseTransport] = []
    helpers: list[asyncio.Task[None]] = []
    exited = asyncio.create_task(process.wait())
    overflowed = asyncio.create_task(_either(output.exceeded, result.exceeded))
    try:
        helpers.append(asyncio.create_task(_feed(await _open_writer(pipes.take("stdin_w"), transports), payload)))
        for name, budget, buffer in (
            ("stdout_r", output, stdout),
            ("stderr_r", output, stderr),
            ("result_r", result, envelope),
        ):
            reader = await _open_reader(pipes.take(name), transports)
            helpers.append(asyncio.create_task(_pump(reader, budget, buffer)))
        done, _ = await asyncio.wait(
            {exited, overflowed}, timeout=limits.wall_seconds, return_when=asyncio.FIRST_COMPLETED
        )
        timed_out = not done
        _kill_group(process.pid)
        await exited
        if spec.cleanup is not None:
            await spec.cleanup()
        await asyncio.wait(helpers, timeout=DRAIN_SECONDS)
    finally:
        overflowed.cancel()
        for task in helpers:
            task.cancel()
        if not exited.done():  # cancelled: the call's processes must not outlive it
            _kill_group(process.pid)
        for transport in transports:
            transport.close()
        pipes.close_all()

    outcome = _Outcome(
        stdout=bytes(stdout).decode(errors="replace"),
        stderr=bytes(stderr).decode(errors="replace"),
        duration_ms=int((time.monotonic() - started) * 1000),
    )
    if result.exceeded.is_set():
        return outcome.failure(
            "result_size", f"The tool's return value is larger than the {limits.max_result_bytes}-byte limit."
        )
    if envelope:
        return outcome.from_envelope(bytes(envelope))
    if output.exceeded.is_set():
        return outcome.failure(
            "output",
            f"The tool wrote more than {_size(limits.max_output_bytes)} to stdout and stderr and was stopped.",
        )
    if timed_out:
        return outcome.failure("timeout", f"The tool did not finish within {limits.wall_seconds:g} s and was stopped.")
    return outcome.from_exit(process.returncode or 0, signal_offset=spec.signal_offset, limits=limits)


@dataclass
class _Outcome:
    stdout: str
    stderr: str
    duration_ms: int

    def failure(self, kind: ErrorKind, message: str) -> SandboxResult:
        return SandboxResult(
            ok=False,
            error=message,
            error_kind=kind,
            stdout=self.stdout,
            stderr=self.stderr,
            duration_ms=self.duration_ms,
        )

    def from_envelope(self, raw: bytes) -> SandboxResult:
        try:
            envelope = json.loads(raw)
        except ValueError:
            envelope = None
        if not isinstance(envelope, dict) or not isinstance(envelope.get("ok"), bool):
            return self.failure("crashed", "The tool's result could not be read (the result channel was corrupted).")
        if envelope["ok"]:
            return SandboxResult(
                ok=True,
                value=envelope.get("value"),
                stdout=self.stdout,
                stderr=self.stderr,
                duration_ms=self.duration_ms,
            )
        kind = envelope.get("kind")
        traceback = envelope.get("traceback")
        if isinstance(traceback, str) and traceback:
            self.stderr = f"{self.stderr}{traceback}"
        return self.failure(
            kind if kind in _ERROR_KINDS and kind else "exception", str(envelope.get("error") or "The tool failed.")
        )

    def from_exit(self, returncode: int, *, signal_offset: bool, limits: SandboxLimits) -> SandboxResult:
        signum = -returncode if returncode < 0 else None
        if signal_offset and returncode > 128:
            signum = returncode - 128
        last_line = next((line for line in reversed(self.stderr.splitlines()) if line.strip()), "")[:300]
        if signum == signal.SIGXCPU:
            return self.failure("cpu", f"The tool used more than {limits.cpu_seconds} s of CPU time and was stopped.")
        if signum == signal.SIGKILL:
            return self.failure(
                "crashed",
                f"The sandbox killed the tool: it went over its CPU time ({limits.cpu_seconds} s) "
                f"or memory ({_size(limits.memory_bytes)}) limit.",
            )
        if signum is not None:
            name = _signal_name(signum)
            message = (
                f"The tool process died from signal {name}; running out of memory "
                f"(limit {_size(limits.memory_bytes)}) can cause this."
            )
            return self.failure("crashed", _with_detail(message, last_line))
        if last_line.startswith("bwrap:"):
            logger.error("Sandbox failed: %s", last_line)
            return self.failure("sandbox", f"The sandbox could not run the tool: {last_line}")
        if returncode:
            message = f"The tool process exited with status {returncode} without returning a result"
        else:
            message = "The tool process exited without returning a result"
        return self.failure("crashed", _with_detail(message, last_line))


class _Budget:
    """A byte budget shared by one or more streams; ``exceeded`` fires when it is spent."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.exceeded = asyncio.Event()

    def take(self, buffer: bytearray, chunk: bytes) -> None:
        room = max(self.limit - self.used, 0)
        buffer.extend(chunk[:room])
        self.used += len(chunk)
        if self.used > self.limit:
            self.exceeded.set()


async def _pump(stream: asyncio.StreamReader, budget: _Budget, buffer: bytearray) -> None:
    while chunk := await stream.read(64 * KiB):
        budget.take(buffer, chunk)
        if budget.exceeded.is_set():
            return  # stop reading; the caller kills the child


async def _feed(transport: asyncio.WriteTransport, payload: bytes) -> None:
    """Write the request and close stdin; a child that dies first just loses it (its exit says why)."""
    transport.write(payload)
    transport.close()


async def _either(first: asyncio.Event, second: asyncio.Event) -> None:
    waiters = [asyncio.create_task(first.wait()), asyncio.create_task(second.wait())]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


async def _open_reader(fd: int, transports: list[asyncio.BaseTransport]) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    transports.append(transport)
    return reader


async def _open_writer(fd: int, transports: list[asyncio.BaseTransport]) -> asyncio.WriteTransport:
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(fd, "wb", buffering=0))
    transports.append(transport)
    return transport


class _Pipes:
    """The four pipes of a call; ``take`` hands an fd over to a transport that will close it."""

    def __init__(self) -> None:
        self.fds: dict[str, int] = {}
        for name in ("stdin", "stdout", "stderr", "result"):
            self.fds[f"{name}_r"], self.fds[f"{name}_w"] = os.pipe()

    def take(self, name: str) -> int:
        return self.fds.pop(name)

    def close_child_ends(self) -> None:
        for name in ("stdin_r", "stdout_w", "stderr_w", "result_w"):
            os.close(self.fds.pop(name))

    def close_all(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pgid, signal.SIGKILL)


def _identity(uid: int | None) -> dict[str, Any]:
    if uid is None:
        return {}
    return {"user": uid, "group": uid, "extra_groups": []}


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _size(n: int) -> str:
    if n % (1024 * KiB) == 0:
        return f"{n // (1024 * KiB)} MiB"
    if n % KiB == 0:
        return f"{n // KiB} KiB"
    return f"{n} bytes"


def _with_detail(message: str, detail: str) -> str:
    return f"{message}: {detail}" if detail else f"{message}."
