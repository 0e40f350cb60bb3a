"""Default backend: each call in fresh Linux namespaces built by bubblewrap (``bwrap``).

The call sees a root file system made of: ``/usr`` (and the ``/lib*``, ``/bin``
links), the Python install read-only, a new ``/proc`` showing only its own processes,
a minimal ``/dev``, and a size-capped ``/tmp`` tmpfs that is its working directory and
vanishes with it. Nothing of the project (settings, ``.env``, SQLite file, virtualenv)
and nothing else of ``/etc``, ``/home``, ``/root`` or ``/var`` exists in there. It has
no network (not even the host's loopback, where Postgres or Redis may listen) unless
``TOOL_SANDBOX_NETWORK`` is on, and it dies with its parent.

As root, ``bwrap`` sets up the mounts and the runner then drops to a per-call
unprivileged uid (only ``CAP_SETUID``/``CAP_SETGID`` are kept for that, and
``no_new_privs`` plus ``nosuid`` mounts stop any way back). As an ordinary user,
``bwrap`` runs unprivileged in a new user namespace and the call keeps the server's
uid, with further user namespaces disabled (``--disable-userns``, where this bwrap has it).

In both modes a seccomp filter (``tools.sandbox.seccomp``) denies the usual escape
system calls, new namespaces among them: in root mode that is what keeps a call
from creating user namespaces, since ``--disable-userns`` needs ``--unshare-user``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from tools.sandbox.base import SandboxLimits
from tools.sandbox.child import LAUNCH_ENV, ChildBackend, ChildSpec, request_payload, runner_command
from tools.sandbox.seccomp import escape_filter, filter_fd
from tools.sandbox.uids import wait_for_uid_exit

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from tools.sandbox.uids import UidLease, UidPool

logger = logging.getLogger(__name__)

SANDBOX_HOME = "/tmp"
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf")
_NETWORK_DIRS = ("/etc/ssl", "/etc/ca-certificates", "/etc/pki")


class BubblewrapBackend(ChildBackend):
    name = "bubblewrap"

    def __init__(self, *, bwrap: str, python: str, uid_pool: UidPool | None) -> None:
        """``uid_pool`` is required when the server runs as root and unused otherwise."""
        if os.geteuid() == 0 and uid_pool is None:
            raise ValueError("Running as root, the bubblewrap backend needs a uid pool to drop privileges")
        self.bwrap = bwrap
        self.python = python
        self.uid_pool = uid_pool if os.geteuid() == 0 else None
        self._mounts = _mounts(python)

    @contextlib.asynccontextmanager
    async def child(self, limits: SandboxLimits) -> AsyncIterator[tuple[ChildSpec, str]]:
        """``bwrap`` around the interpreter (under a leased uid as root), with the seccomp filter on an fd."""
        lease = self.uid_pool.acquire() if self.uid_pool is not None else None
        seccomp_fd = _seccomp_fd()
        try:
            uid = lease.uid if lease is not None else None
            yield (
                ChildSpec(
                    argv_for=lambda fd: self.command(fd, uid, limits, seccomp_fd=seccomp_fd),
                    signal_offset=True,
                    extra_fds=(seccomp_fd,) if seccomp_fd is not None else (),
                ),
                SANDBOX_HOME,
            )
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
            if lease is not None:
                await _release(lease)

    def command(
        self, result_fd: int, uid: int | None, limits: SandboxLimits, *, seccomp_fd: int | None = None
    ) -> list[str]:
        argv = [self.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        if not limits.network:
            argv.append("--unshare-net")
        if uid is not None:
            argv += ["--cap-add", "CAP_SETUID,CAP_SETGID"]
        else:
            argv.append("--unshare-user")
            if supports(self.bwrap, "--disable-userns"):
                argv.append("--disable-userns")
        if seccomp_fd is not None:
            argv += ["--seccomp", str(seccomp_fd)]
        argv += ["--hostname", "sandbox", "--die-with-parent", "--new-session", *self._mounts]
        if limits.network:
            argv += [arg for path in _NETWORK_FILES + _NETWORK_DIRS for arg in ("--ro-bind-try", path, path)]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        argv += ["--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", SANDBOX_HOME, "--chdir", SANDBOX_HOME]
        return [*argv, "--", *runner_command(self.python, result_fd, uid)]

    def probe(self) -> str | None:
        """Run one trivial call; ``None`` when it works, else what went wrong."""
        lease = self.uid_pool.acquire() if self.uid_pool is not None else None
        read_fd, write_fd = os.pipe()
        seccomp_fd = _seccomp_fd()
        try:
            limits = SandboxLimits()
            payload = request_payload("def probe() -> str:\n    return 'ok'\n", "probe", {}, {}, limits)
            command = self.command(write_fd, lease.uid if lease else None, limits, seccomp_fd=seccomp_fd)
            completed = subprocess.run(
                command,
                input=payload,
                capture_output=True,
                pass_fds=(write_fd,) if seccomp_fd is None else (write_fd, seccomp_fd),
                env=LAUNCH_ENV,
                timeout=30,
                start_new_session=True,
                check=False,
            )
            os.close(write_fd)
            write_fd = -1
            with os.fdopen(read_fd, "rb") as result:
                read_fd = -1
                envelope = result.read(4096)
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        finally:
            for fd in (read_fd, write_fd, seccomp_fd if seccomp_fd is not None else -1):
                if fd >= 0:
                    os.close(fd)
            if lease is not None:
                lease.release()
        if envelope != b'{"ok": true, "value": "ok"}':
            return completed.stderr.decode(errors="replace").strip() or f"exit status {completed.returncode}"
        return None


@functools.cache
def supports(bwrap: str, option: str) -> bool:
    """Whether this ``bwrap`` knows ``option`` (``--disable-userns`` came with bubblewrap 0.8)."""
    try:
        completed = subprocess.run([bwrap, "--help"], capture_output=True, env=LAUNCH_ENV, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return option.encode() in completed.stdout + completed.stderr


def _seccomp_fd() -> int | None:
    """An fd holding the escape filter for ``bwrap --seccomp``; ``None`` without libseccomp."""
    program = escape_filter()
    return filter_fd(program) if program is not None else None


async def _release(lease: UidLease) -> None:
    """Outer bwrap can exit while the kernel still tears down its pid namespace: wait for that first."""
    if not await wait_for_uid_exit(lease.uid):
        logger.warning("Sandbox uid %s still has processes after the call; releasing it anyway.", lease.uid)
    lease.release()


def _mounts(python: str) -> list[str]:
    """Read-only binds of the system directories and of the interpreter's install prefix."""
    mounts = ["--ro-bind", "/usr", "/usr"]
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            mounts += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            mounts += ["--ro-bind", path, path]
    prefix = Path(os.path.realpath(python)).parent.parent
    if prefix != Path("/usr") and Path("/usr") not in prefix.parents:
        # bwrap would create the parents with mode 0700; the dropped uid must traverse them.
        for parent in reversed(prefix.parents[:-1]):
            mounts += ["--perms", "0755", "--dir", str(parent)]
        mounts += ["--ro-bind", str(prefix), str(prefix)]
    return mounts
