"""Fallback backend: a plain child process, under a dedicated uid when the server is root.

What holds: a clean environment, a fresh private working directory (mode 0700,
removed afterwards), the resource limits, the wall clock, capped output, and (as
root) everything file permissions give an unprivileged uid: root-only files,
``/proc/<pid>/environ`` of the server and other calls are out of reach, and every
process of the call's uid is killed afterwards, even ones that left the process group.

What does not: world-readable files stay readable and the network is the host's.
Prefer ``BubblewrapBackend``; this one is used only when the operator names it
(``TOOL_SANDBOX_BACKEND=unsafe-no-isolation``), and never without a per-call uid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from typing import TYPE_CHECKING

from tools.sandbox.child import LAUNCH_ENV, ChildBackend, ChildSpec, runner_command
from tools.sandbox.uids import wait_for_uid_exit

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tools.sandbox.base import SandboxLimits
    from tools.sandbox.uids import UidPool


class ProcessBackend(ChildBackend):
    name = "process"

    def __init__(self, *, python: str, uid_pool: UidPool | None) -> None:
        if uid_pool is None or os.geteuid() != 0:
            raise ValueError("The process backend runs each call under a uid of its own: the server must be root")
        self.python = python
        self.uid_pool = uid_pool

    @contextlib.asynccontextmanager
    async def child(self, limits: SandboxLimits) -> AsyncIterator[tuple[ChildSpec, str]]:
        """The interpreter under a leased uid, in a fresh private working directory that is also its ``HOME``."""
        lease = self.uid_pool.acquire()
        workdir = tempfile.mkdtemp(prefix="agentserver-tool-")
        try:
            uid = lease.uid
            os.chown(workdir, uid, uid)
            yield (
                ChildSpec(
                    argv_for=lambda fd: runner_command(self.python, fd, None),
                    cwd=workdir,
                    user=uid,
                    cleanup=lambda: kill_every_process_of(uid, python=self.python),
                ),
                workdir,
            )
        finally:
            await asyncio.to_thread(shutil.rmtree, workdir, ignore_errors=True)
            await wait_for_uid_exit(lease.uid)
            lease.release()


async def kill_every_process_of(uid: int, *, python: str = sys.executable) -> None:
    """SIGKILL every process of ``uid`` with one ``kill(-1)`` issued as that uid.

    The kernel walks the process list under a lock, so a fork bomb cannot outrun it,
    and daemonized children that left the process group die too.
    """
    kill = shutil.which("kill", path=LAUNCH_ENV["PATH"])
    command = [kill, "-9", "-1"] if kill else [python, "-I", "-S", "-c", _KILL_ALL]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env=LAUNCH_ENV,
        user=uid,
        group=uid,
        extra_groups=[],
    )
    await process.wait()


_KILL_ALL = "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept ProcessLookupError:\n    pass\n"
