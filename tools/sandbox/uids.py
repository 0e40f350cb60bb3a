"""Unprivileged uids for sandboxed calls, one per running call.

A dedicated uid per call is what makes ``RLIMIT_NPROC`` a per-call limit (the kernel
counts processes per real uid) and keeps concurrent calls of different tenants from
signalling or tracing each other. The uids need no ``/etc/passwd`` entry. A lease is an
``flock`` on one file per uid, so it also holds between worker processes on one host.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

ATTEMPTS = 64
EXIT_WAIT_SECONDS = 2.0


@dataclass
class UidLease:
    uid: int
    fd: int

    def release(self) -> None:
        os.close(self.fd)  # closing the file drops the flock


class UidPool:
    def __init__(self, *, base: int, count: int, lock_dir: Path) -> None:
        if base < 1000 or count < 1 or base + count > 2**32 - 2:
            raise ValueError(f"Invalid sandbox uid range: {base}..{base + count}")
        self.base = base
        self.count = count
        self.lock_dir = lock_dir

    def acquire(self) -> UidLease:
        self._ensure_lock_dir()
        for _ in range(ATTEMPTS):
            uid = self.base + secrets.randbelow(self.count)
            fd = os.open(self.lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return UidLease(uid=uid, fd=fd)
        raise RuntimeError(f"No free sandbox uid after {ATTEMPTS} attempts in {self.base}..{self.base + self.count}")

    def _ensure_lock_dir(self) -> None:
        self.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(self.lock_dir)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise RuntimeError(f"{self.lock_dir} must be a directory of uid {os.geteuid()} with mode 0700")


async def wait_for_uid_exit(uid: int, *, timeout: float = EXIT_WAIT_SECONDS) -> bool:
    """Wait until no process of ``uid`` is left (killed ones may take a moment to go); ``False`` on timeout.

    Called before a lease is released, so the next call under that uid finds none of
    the previous call's processes. ``/proc/<pid>`` is owned by the process's uid, so
    one ``stat`` per process is enough (a fraction of a millisecond per call).
    """
    deadline = time.monotonic() + timeout
    while _has_processes(uid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True


def _has_processes(uid: int) -> bool:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid and not _is_zombie(entry.path):
                return True
        except OSError:
            continue  # exited while we looked
    return False


def _is_zombie(proc_path: str) -> bool:
    """Dead and waiting for its parent (or init) to reap it: nothing left to wait for."""
    with open(f"{proc_path}/stat", "rb") as stat_file:
        return stat_file.read().rsplit(b")", 1)[1].split()[0] == b"Z"
