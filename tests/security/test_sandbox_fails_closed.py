"""Issue 14, items 2 and 18: tools never run unisolated unless asked for by name; bubblewrap in root mode is tight."""

from __future__ import annotations

import logging
import os
import stat
from typing import TYPE_CHECKING

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.sqlite3.base import DatabaseWrapper

from tests.tools.helpers import FAST_LIMITS
from tools.base import ToolContext, ToolSpec
from tools.runtime import DefaultToolRunner
from tools.sandbox.process import ProcessBackend
from tools.sandbox.selection import get_sandbox_backend
from tools.schema import derive_tool_schema

if TYPE_CHECKING:
    from pathlib import Path

SOURCE = "def where() -> str:\n    import os\n    return os.getcwd()\n"


def _spec() -> ToolSpec:
    return ToolSpec(name="where", kind="source", json_schema=derive_tool_schema(SOURCE), source_code=SOURCE)


async def test_auto_refuses_source_tools_with_a_clear_error_when_bubblewrap_cannot_start(settings, caplog):
    settings.TOOL_SANDBOX_PYTHON = "/nonexistent/bin/python3"  # bubblewrap's probe call fails
    with caplog.at_level(logging.ERROR, logger="tools.sandbox.selection"):
        backend = get_sandbox_backend()
    assert backend.name == "unavailable"
    assert "source tools are REFUSED" in caplog.text

    runner = DefaultToolRunner(sandbox=backend, limits=FAST_LIMITS)
    outcome = await runner.run(_spec(), "{}", ToolContext(organization_id=None, agent_id=None))
    assert outcome.status == "error"
    assert outcome.tool_return.startswith("Source tools cannot run: this server has no working sandbox")
    assert "never run without isolation" in outcome.tool_return


def test_the_unisolated_backend_needs_its_alarming_name(settings):
    settings.TOOL_SANDBOX_BACKEND = "process"
    with pytest.raises(ImproperlyConfigured, match="unsafe-no-isolation"):
        get_sandbox_backend()
    settings.TOOL_SANDBOX_BACKEND = "unsafe-no-isolation"
    assert get_sandbox_backend().name == "process"


def test_the_unisolated_backend_never_runs_without_a_per_call_uid(settings, monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="uid of its own"):
        ProcessBackend(python="/usr/bin/python3", uid_pool=None)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    settings.TOOL_SANDBOX_BACKEND = "unsafe-no-isolation"
    settings.TOOL_SANDBOX_STATE_DIR = str(tmp_path)
    backend = get_sandbox_backend()
    assert backend.name == "unavailable"
    assert "needs the server to run as root" in backend.reason  # type: ignore[attr-defined]


def test_the_sqlite_file_is_created_readable_by_the_server_only(tmp_path: Path, django_db_blocker):
    path = tmp_path / "db.sqlite3"
    wrapper = DatabaseWrapper(_sqlite_settings(path), alias="security-sqlite")
    try:
        with django_db_blocker.unblock(), wrapper.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("CREATE TABLE secrets (value text)")
    finally:
        wrapper.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for sidecar in (tmp_path / "db.sqlite3-wal", tmp_path / "db.sqlite3-shm"):
        if sidecar.exists():
            assert stat.S_IMODE(sidecar.stat().st_mode) & 0o077 == 0


def _sqlite_settings(path: Path) -> dict:
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": {},
        "TIME_ZONE": None,
        "AUTOCOMMIT": True,
        "ATOMIC_REQUESTS": False,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": False,
        "TEST": {},
    }


ESCAPE_ATTEMPTS = """
def escape() -> dict:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def errno_of(result: int) -> int:
        return 0 if result == 0 else ctypes.get_errno()

    return {
        "unshare(CLONE_NEWUSER)": errno_of(libc.unshare(0x10000000)),
        "ptrace(TRACEME)": errno_of(libc.ptrace(0, 0, None, None)),
        "keyctl(GET_KEYRING_ID)": errno_of(libc.syscall(250, 0, -3, 0)),
        "bpf(MAP_CREATE)": errno_of(libc.syscall(321, 0, None, 0)),
        "mount(tmpfs)": errno_of(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
    }
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="system call numbers are x86-64's")
async def test_a_sandboxed_call_cannot_make_user_namespaces_trace_or_reach_the_keyring_or_ebpf():
    backend = get_sandbox_backend()
    assert backend.name == "bubblewrap", getattr(backend, "reason", backend)
    result = await backend.execute(ESCAPE_ATTEMPTS, "escape", {}, {}, FAST_LIMITS)
    assert result.ok, result.error
    assert result.value == dict.fromkeys(result.value, 1)  # EPERM for every one
    assert len(result.value) == 5
