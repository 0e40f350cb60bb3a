"""Which sandbox backend runs source tools here (``TOOL_SANDBOX_BACKEND``).

The choice fails closed: tool source is untrusted, so code never runs without
isolation unless the operator asked for that by name.

- ``"auto"`` (default) and ``"bubblewrap"``: bubblewrap when a probe call works;
  otherwise nothing, and source tools fail with an error result saying why. Without
  ``bwrap`` on the PATH that is one line of information (``SOURCE_TOOLS_OFF``, also shown
  by ``make run`` and on the tools page); an installed bubblewrap that fails is an error at start-up (see
  ``announce_sandbox``). Built-ins, the demo tools among them, need no sandbox.
- ``"unsafe-no-isolation"``: the process backend, a plain child process under a
  dedicated per-call uid. World-readable files and the host's network (Redis, Postgres,
  cloud metadata) are reachable from tools. It needs the server to run as root (for
  the per-call uids) and is refused otherwise. Only for hosts where bubblewrap cannot
  run and every tenant is trusted.
- ``"disabled"``: source tools are switched off.
- a dotted path: a class of your own implementing ``SandboxBackend`` (a container
  or remote sandbox), instantiated without arguments.

Other settings: ``TOOL_SANDBOX_PYTHON`` (the interpreter, Python 3.10 or later; default
the one running the server, resolved out of its virtualenv: tools get its standard
library and no site-packages), ``TOOL_SANDBOX_UID_BASE`` / ``TOOL_SANDBOX_UID_COUNT`` (the
uid range calls run under when the server is root) and ``TOOL_SANDBOX_STATE_DIR`` (where
uid leases are locked). The process backend relies on an init that reaps orphans
(``docker run --init``); bubblewrap reaps inside its own pid namespace.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from tools.sandbox.base import SandboxBackend, UnavailableBackend
from tools.sandbox.bubblewrap import BubblewrapBackend
from tools.sandbox.child import LAUNCH_ENV
from tools.sandbox.process import ProcessBackend
from tools.sandbox.uids import UidPool

logger = logging.getLogger(__name__)

DEFAULT_UID_BASE = 1_900_000_000
DEFAULT_UID_COUNT = 65_536
RETRY_PROBE_SECONDS = 60.0
UNSAFE_NO_ISOLATION = "unsafe-no-isolation"
_CHOICES = f"auto, bubblewrap, {UNSAFE_NO_ISOLATION}, disabled or a dotted class path"
_SYSTEM_PYTHONS = ("/usr/local/bin/python3", "/usr/bin/python3")
SOURCE_TOOLS_OFF = "source tools are off: install bubblewrap (apt-get install bubblewrap) to run tools your users write"


def get_sandbox_backend() -> SandboxBackend:
    """The configured backend, built (and probed) once per process and configuration.

    The first call may block for a probe run of a few tens of milliseconds. A choice
    made because an installed bubblewrap failed its probe is reconsidered after
    ``RETRY_PROBE_SECONDS``, so a passing fault does not weaken isolation for good.
    """
    key = _Key(
        choice=str(getattr(settings, "TOOL_SANDBOX_BACKEND", "auto")),
        python=str(getattr(settings, "TOOL_SANDBOX_PYTHON", "") or default_python()),
        uid_base=int(getattr(settings, "TOOL_SANDBOX_UID_BASE", DEFAULT_UID_BASE)),
        uid_count=int(getattr(settings, "TOOL_SANDBOX_UID_COUNT", DEFAULT_UID_COUNT)),
        state_dir=str(getattr(settings, "TOOL_SANDBOX_STATE_DIR", "") or default_state_dir()),
        search_path=os.environ.get("PATH", ""),
    )
    cached = _chosen.get(key)
    if cached is not None and (cached[1] is None or time.monotonic() < cached[1]):
        return cached[0]
    backend, provisional = _backend(key)
    _chosen[key] = (backend, time.monotonic() + RETRY_PROBE_SECONDS if provisional else None)
    return backend


def default_python() -> str:
    """The server's interpreter outside any virtualenv: tools get the standard library only."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def default_state_dir() -> str:
    return os.path.join(tempfile.gettempdir(), f"agentserver-sandbox-{os.geteuid()}")


@dataclass(frozen=True)
class _Key:
    choice: str
    python: str
    uid_base: int
    uid_count: int
    state_dir: str
    search_path: str  # where bwrap is looked for


_chosen: dict[_Key, tuple[SandboxBackend, float | None]] = {}


def _backend(key: _Key) -> tuple[SandboxBackend, bool]:
    """The backend for ``key``, and whether the choice is provisional (bubblewrap failed its probe)."""
    uid_pool = None
    if os.geteuid() == 0:
        uid_pool = UidPool(base=key.uid_base, count=key.uid_count, lock_dir=Path(key.state_dir))
    if key.choice == "disabled":
        return UnavailableBackend(
            "Source tools are disabled on this server (TOOL_SANDBOX_BACKEND=disabled).",
            notice="source tools are off (TOOL_SANDBOX_BACKEND=disabled)",
        ), False
    if key.choice == "process":
        raise ImproperlyConfigured(
            f"TOOL_SANDBOX_BACKEND='process' runs tools without isolation and is now spelled "
            f"{UNSAFE_NO_ISOLATION!r}; prefer bubblewrap."
        )
    if key.choice == UNSAFE_NO_ISOLATION:
        if uid_pool is None:
            logger.error("Tool sandbox: %s needs the server to run as root (one uid per call).", UNSAFE_NO_ISOLATION)
            return UnavailableBackend(
                f"Source tools cannot run: TOOL_SANDBOX_BACKEND={UNSAFE_NO_ISOLATION} needs the server to run "
                "as root, so that every call gets a uid of its own."
            ), False
        logger.warning(
            "Tool sandbox: %s. Tools run WITHOUT ISOLATION: world-readable files and the host's network "
            "are reachable from every tenant's tools.",
            UNSAFE_NO_ISOLATION,
        )
        return _process_backend(key.python, uid_pool), False
    if key.choice in {"auto", "bubblewrap"}:
        bwrap = _bwrap_path(key.search_path)
        if bwrap is None:
            logger.info("Tool sandbox: %s.", SOURCE_TOOLS_OFF)
            reason = (
                "Source tools cannot run: this server has no working sandbox (bwrap is not installed). "
                "An operator must install bubblewrap (apt-get install bubblewrap); tools are never run "
                "without isolation."
            )
            return UnavailableBackend(reason, notice=SOURCE_TOOLS_OFF), False
        problem = BubblewrapBackend(bwrap=bwrap, python=key.python, uid_pool=uid_pool).probe()
        if problem is None:
            return BubblewrapBackend(bwrap=bwrap, python=key.python, uid_pool=uid_pool), False
        logger.error(
            "Tool sandbox: bubblewrap is unusable (%s); source tools are REFUSED until it works. "
            "Give the server a host where bubblewrap can create namespaces (see the README, Security).",
            problem,
        )
        reason = (
            f"Source tools cannot run: this server has no working sandbox ({problem}). "
            "An operator must make bubblewrap usable; tools are never run without isolation."
        )
        notice = f"source tools are off: bubblewrap is installed but cannot run here ({problem})"
        return UnavailableBackend(reason, notice=notice), True
    if "." in key.choice:
        return import_string(key.choice)(), False
    raise ImproperlyConfigured(f"TOOL_SANDBOX_BACKEND={key.choice!r}: use {_CHOICES}.")


def source_tools_notice() -> str | None:
    """One line saying why source tools cannot run on this server, or ``None`` when they can."""
    try:
        backend = get_sandbox_backend()
    except ImproperlyConfigured as exc:
        return f"source tools are off: {exc}"
    return backend.notice if isinstance(backend, UnavailableBackend) else None


def announce_sandbox() -> None:
    """Resolve the backend now (in a thread) so a missing sandbox is logged when the server starts."""

    def resolve() -> None:
        try:
            backend = get_sandbox_backend()
        except ImproperlyConfigured as exc:
            logger.error("Tool sandbox: %s", exc)
            return
        logger.info("Tool sandbox: %s", backend.name)

    threading.Thread(target=resolve, name="sandbox-probe", daemon=True).start()


def _process_backend(python: str, uid_pool: UidPool) -> SandboxBackend:
    """Under a dedicated uid the interpreter must be usable by anyone (pyenv under /root is not)."""
    if world_usable(python):
        return ProcessBackend(python=python, uid_pool=uid_pool)
    usable = next((candidate for candidate in _SYSTEM_PYTHONS if world_usable(candidate)), None)
    if usable is None:
        return UnavailableBackend(
            f"Source tools cannot run: the interpreter {python} is not readable by unprivileged users; "
            "set TOOL_SANDBOX_PYTHON to one that is."
        )
    logger.warning("Tool sandbox: %s is not usable by the sandbox uids; using %s instead.", python, usable)
    return ProcessBackend(python=usable, uid_pool=uid_pool)


def world_usable(python: str) -> bool:
    """Whether any user may run ``python`` and read its standard library (checked by mode bits)."""
    real = Path(os.path.realpath(python))
    try:
        if not real.stat().st_mode & stat.S_IXOTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in real.parents)
    except OSError:
        return False


def _bwrap_path(search_path: str) -> str | None:
    """``bwrap`` on the server's PATH (the operator's choice, like any program); the system's without one."""
    return shutil.which("bwrap", path=search_path or f"{LAUNCH_ENV['PATH']}:/usr/sbin:/sbin")
