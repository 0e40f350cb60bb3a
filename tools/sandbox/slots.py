"""How many sandboxed calls may run at once, on this host and for one organization.

``run_sandboxed`` is the one way the tool runner and ``run_code`` start a sandboxed
call. It takes a slot of the server (``TOOL_SANDBOX_MAX_CALLS``) and one of the call's
organization (``TOOL_SANDBOX_MAX_CALLS_PER_ORGANIZATION``) first; when either is full the
call does not wait: it answers a "busy" error result the model can act on.

A slot is an ``flock`` on one of N files in the sandbox state directory (as uid leases
are), so the caps hold across every web and worker process of the host, and a process
that dies frees its slots with its files.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

from tools.sandbox.base import SandboxResult
from tools.sandbox.selection import default_state_dir

if TYPE_CHECKING:
    import uuid
    from collections.abc import Awaitable, Callable, Iterator

DEFAULT_MAX_CALLS = 8
DEFAULT_MAX_CALLS_PER_ORGANIZATION = 4


class SandboxBusy(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def run_sandboxed(
    call: Callable[[], Awaitable[SandboxResult]], *, organization_id: uuid.UUID | None
) -> SandboxResult:
    """``call()``, a backend's ``execute`` with its arguments bound, within the concurrency caps.

    A full cap is an ``error_kind="busy"`` result, and the call never starts.
    """
    try:
        with call_slots(organization_id):
            return await call()
    except SandboxBusy as busy:
        return SandboxResult(ok=False, error=busy.message, error_kind="busy")


@contextlib.contextmanager
def call_slots(organization_id: uuid.UUID | None) -> Iterator[None]:
    """Hold a server slot and (for a call of an organization) an organization slot; ``SandboxBusy`` if none."""
    server_cap = int(getattr(settings, "TOOL_SANDBOX_MAX_CALLS", DEFAULT_MAX_CALLS))
    organization_cap = int(
        getattr(settings, "TOOL_SANDBOX_MAX_CALLS_PER_ORGANIZATION", DEFAULT_MAX_CALLS_PER_ORGANIZATION)
    )
    directory = _slot_dir()
    with contextlib.ExitStack() as held:
        if organization_id is not None:
            held.enter_context(
                _slot(
                    directory,
                    f"org-{organization_id}",
                    organization_cap,
                    f"The sandbox is busy: your organization already has {organization_cap} tool calls running. "
                    "Try again when one of them has finished.",
                )
            )
        held.enter_context(
            _slot(
                directory,
                "server",
                server_cap,
                f"The sandbox is busy: this server is running its limit of {server_cap} tool calls. "
                "Try again in a moment.",
            )
        )
        yield


@contextlib.contextmanager
def _slot(directory: Path, name: str, cap: int, busy_message: str) -> Iterator[None]:
    for index in range(max(cap, 0)):
        fd = os.open(directory / f"{name}-{index}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield
        finally:
            os.close(fd)  # closing the file drops the flock
        return
    raise SandboxBusy(busy_message)


def _slot_dir() -> Path:
    base = Path(str(getattr(settings, "TOOL_SANDBOX_STATE_DIR", "") or default_state_dir()))
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory = base / "slots"
    directory.mkdir(mode=0o700, exist_ok=True)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise RuntimeError(f"{directory} must be a directory of uid {os.geteuid()} with mode 0700")
    return directory
