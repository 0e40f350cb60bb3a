"""The fallback backend (a child process under a per-call uid): what it still guarantees."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from tests.tools.helpers import CPU_BOUND_LIMITS, FAST_LIMITS, FORK_BOMB, processes_of_uid
from tools.sandbox.base import SandboxLimits

SECRET = "sk-test-server-secret-5d1c9e"


async def _call(backend, source: str, arguments: dict | None = None, env: dict | None = None):
    name = source.split("def ", 1)[1].split("(", 1)[0].strip()
    return await backend.execute(source, name, arguments or {}, env or {}, FAST_LIMITS)


async def test_it_runs_the_call_as_an_unprivileged_uid_with_only_the_declared_environment(process_sandbox, monkeypatch):
    monkeypatch.setenv("AGENTSERVER_FAKE_PROVIDER_KEY", SECRET)
    source = """
def who() -> dict:
    import os
    return {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "env": dict(os.environ)}
"""
    result = await _call(process_sandbox, source, env={"REGION": "eu"})
    assert result.ok
    assert result.value["uid"] != 0
    assert result.value["gid"] == result.value["uid"]
    assert result.value["groups"] == []
    assert set(result.value["env"]) == {"PATH", "HOME", "LANG", "REGION"}
    assert SECRET not in json.dumps(result.value)


async def test_it_keeps_the_servers_environment_out_of_reach_through_proc(process_sandbox, monkeypatch):
    monkeypatch.setenv("AGENTSERVER_FAKE_PROVIDER_KEY", SECRET)
    source = """
def scan(secret: str, server_pid: int) -> dict:
    import os
    found = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if secret.encode() in handle.read():
                    found.append(pid)
        except OSError:
            pass
    try:
        open(f"/proc/{server_pid}/environ", "rb").read()
        server = "readable"
    except OSError as exc:
        server = type(exc).__name__
    return {"found": found, "server": server}
"""
    result = await _call(process_sandbox, source, {"secret": SECRET, "server_pid": os.getpid()})
    assert result.value == {"found": [], "server": "PermissionError"}


async def test_it_keeps_root_only_files_unreadable(process_sandbox):
    directory = Path(tempfile.mkdtemp(prefix="server-secrets-"))
    directory.chmod(0o755)
    secret_file = directory / "provider.key"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o600)
    try:
        source = "def read(path: str) -> str:\n    return open(path).read()\n"
        result = await _call(process_sandbox, source, {"path": str(secret_file)})
    finally:
        secret_file.unlink()
        directory.rmdir()
    assert not result.ok
    assert result.error.startswith("Error executing function read: PermissionError: [Errno 13] Permission denied")


async def test_it_gives_each_call_a_private_working_directory_and_removes_it(process_sandbox):
    source = """
def where() -> dict:
    import os
    info = os.stat(".")
    return {"cwd": os.getcwd(), "mode": info.st_mode & 0o777, "owner": info.st_uid, "uid": os.getuid()}
"""
    result = await _call(process_sandbox, source)
    assert result.value["mode"] == 0o700
    assert result.value["owner"] == result.value["uid"]
    assert not Path(result.value["cwd"]).exists()


async def test_it_kills_processes_that_escaped_the_process_group(process_sandbox):
    source = """
def daemonize() -> dict:
    import os, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(120)
        os._exit(0)
    time.sleep(0.2)
    return {"uid": os.getuid()}
"""
    # A CPU budget of a few seconds: without cgroups, a 1 s budget is one process (tools/sandbox/cgroups.py).
    result = await process_sandbox.execute(source, "daemonize", {}, {}, SandboxLimits(wall_seconds=4.0, cpu_seconds=4))
    assert result.ok, result.error
    assert processes_of_uid(result.value["uid"]) == []


@pytest.mark.parametrize(
    ("source", "kind", "message"),
    [
        (
            "def hog() -> str:\n    return str(len(bytearray(10**9)))\n",
            "memory",
            "exceeded its memory limit of 256 MiB",
        ),
        ("def shout() -> str:\n    while True:\n        print('x' * 100_000)\n", "output", "wrote more than 64 KiB"),
        ("def wait() -> str:\n    import time\n    time.sleep(3600)\n", "timeout", "did not finish within 4 s"),
    ],
)
async def test_it_enforces_the_same_limits(process_sandbox, source, kind, message):
    result = await _call(process_sandbox, source)
    assert not result.ok
    assert result.error_kind == kind
    assert message in result.error


async def test_it_stops_an_infinite_loop_at_the_cpu_limit(process_sandbox):
    source = "def spin() -> str:\n    while True:\n        pass\n"
    result = await process_sandbox.execute(source, "spin", {}, {}, CPU_BOUND_LIMITS)
    assert (result.error_kind, result.error) == ("cpu", "The tool used more than 1 s of CPU time and was stopped.")


async def test_it_caps_the_number_of_processes_of_a_call(process_sandbox):
    result = await _call(process_sandbox, FORK_BOMB)
    assert result.value["forked"] < FAST_LIMITS.max_processes
    assert processes_of_uid(result.value["uid"]) == []
