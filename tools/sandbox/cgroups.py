"""A cgroup (v2) per sandboxed call: memory, processes and CPU limited for the whole call.

Resource limits (``setrlimit``) hold per process, so a call of N processes could use N
times its memory and CPU. When the host delegates a cgroup v2 directory to the server
(``TOOL_SANDBOX_CGROUP_PARENT``: writable by the server, with the ``cpu``, ``memory`` and
``pids`` controllers available), every call gets a child cgroup of its own there:

- ``memory.max`` = the call's memory (swap off), ``pids.max`` = its processes;
- ``cpu.max`` = ``cpu_seconds / wall_seconds`` of one CPU, so that within its wall clock
  the whole call cannot use more than its CPU seconds;
- the call's first process joins the cgroup before it runs anything (so everything it
  starts is inside), and the cgroup is killed and removed when the call ends.

Without a usable parent, ``runner_limits`` lowers the per-process limits instead, so
that their product over the call's processes stays within the call's budget.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from django.conf import settings

from tools.sandbox.base import MiB, SandboxLimits

logger = logging.getLogger(__name__)

CONTROLLERS = ("cpu", "memory", "pids")
CPU_PERIOD_US = 100_000
#: Without cgroups, a call may have at most this many processes (threads count too) ...
FALLBACK_MAX_PROCESSES = 4
#: ... and none gets less address space than this (the interpreter alone needs some).
FALLBACK_MIN_PROCESS_MEMORY = 64 * MiB
REMOVE_WAIT_SECONDS = 2.0


def configured_parent() -> Path | None:
    """The delegated parent cgroup, when one is configured and usable here."""
    configured = str(getattr(settings, "TOOL_SANDBOX_CGROUP_PARENT", "") or "")
    if not configured:
        return None
    problem = parent_problem(configured)
    if problem is not None:
        return None
    return Path(configured)


@functools.cache
def parent_problem(path: str) -> str | None:
    """``None`` when ``path`` can hold per-call cgroups, else why not (logged once)."""
    parent = Path(path)
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
        missing = [name for name in CONTROLLERS if name not in available]
        if missing:
            raise OSError(f"controllers {', '.join(missing)} are not available there")
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        wanted = " ".join(f"+{name}" for name in CONTROLLERS if name not in enabled)
        if wanted:
            (parent / "cgroup.subtree_control").write_text(wanted)
        if not os.access(parent, os.W_OK):
            raise OSError("the server cannot create cgroups there")
    except OSError as exc:
        problem = f"TOOL_SANDBOX_CGROUP_PARENT={path} is not a usable cgroup v2 directory ({exc})"
        logger.error("Tool sandbox: %s; calls fall back to lower per-process limits.", problem)
        return problem
    return None


def runner_limits(limits: SandboxLimits, *, cgroup: bool) -> SandboxLimits:
    """The per-process limits a call's runner sets.

    In a cgroup they are the call's own (the cgroup bounds the sum). Without one, the
    process count is lowered and memory and CPU are divided by it, so that every process
    at its limit together still stay within the call's budget.
    """
    if cgroup:
        return limits
    processes = min(
        limits.max_processes,
        FALLBACK_MAX_PROCESSES,
        max(1, limits.cpu_seconds),
        max(1, limits.memory_bytes // FALLBACK_MIN_PROCESS_MEMORY),
    )
    processes = max(1, processes)
    return replace(
        limits,
        max_processes=processes,
        memory_bytes=limits.memory_bytes // processes,
        cpu_seconds=max(1, limits.cpu_seconds // processes),
    )


@dataclass
class CallCgroup:
    """One call's cgroup. ``join`` runs in the child between fork and exec."""

    path: Path
    procs_fd: int

    @classmethod
    def create(cls, parent: Path, limits: SandboxLimits) -> CallCgroup:
        path = parent / f"call-{uuid.uuid4().hex}"
        path.mkdir(mode=0o755)
        try:
            (path / "memory.max").write_text(str(limits.memory_bytes))
            with contextlib.suppress(FileNotFoundError):  # no swap accounting on this host
                (path / "memory.swap.max").write_text("0")
            (path / "pids.max").write_text(str(limits.max_processes))
            quota = max(1000, int(CPU_PERIOD_US * limits.cpu_seconds / max(limits.wall_seconds, 0.001)))
            (path / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
            procs_fd = os.open(path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            raise
        return cls(path=path, procs_fd=procs_fd)

    def join(self) -> None:
        """Move the calling process into this cgroup (``preexec_fn``: the child, before exec)."""
        os.write(self.procs_fd, b"0")

    def memory_exhausted(self) -> bool:
        with contextlib.suppress(OSError):
            events = dict(line.split() for line in (self.path / "memory.events").read_text().splitlines())
            return int(events.get("oom_kill", "0")) > 0
        return False

    def destroy(self) -> None:
        """Kill whatever is left in the cgroup and remove it."""
        os.close(self.procs_fd)
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")
        deadline = time.monotonic() + REMOVE_WAIT_SECONDS
        while True:
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    logger.warning("Sandbox cgroup %s could not be removed", self.path)
                    return
                time.sleep(0.01)
