"""Escape attempts against the default (bubblewrap) sandbox: each is contained, with a clear result.

Every tool here goes through ``DefaultToolRunner`` exactly as the engine calls it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import sqlite3
import tempfile
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.tools.helpers import (
    CPU_BOUND_LIMITS,
    FAST_LIMITS,
    FORK_BOMB,
    NO_CONTEXT,
    model_view,
    processes_of_uid,
    source_spec,
)
from tools.base import ToolContext
from tools.runtime import DefaultToolRunner
from tools.sandbox.base import SandboxLimits
from tools.sandbox.bubblewrap import BubblewrapBackend
from tools.sandbox.selection import default_python
from tools.sandbox.uids import UidPool

SECRET = "sk-test-server-secret-0b7e4f2a9c"


@pytest.fixture
def server_secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AGENTSERVER_FAKE_PROVIDER_KEY", SECRET)
    return SECRET


@pytest.fixture
def root_only_secret_file() -> Path:
    """A secret outside any temp folder a tool gets: a root-only file in a world-traversable directory."""
    directory = Path(tempfile.mkdtemp(prefix="server-secrets-"))
    directory.chmod(0o755)
    secret_file = directory / "provider.key"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o600)
    yield secret_file
    secret_file.unlink()
    directory.rmdir()


async def test_it_runs_a_tool_and_returns_its_value(runner):
    outcome = await runner.run(
        source_spec("def double(n: int) -> str:\n    print('working')\n    return str(n * 2)\n"),
        '{"n": "21"}',
        NO_CONTEXT,
    )
    assert outcome.status == "success"
    assert outcome.tool_return == "42"
    assert outcome.stdout == ["working\n"]
    assert model_view(outcome)["status"] == "OK"


async def test_a_tool_sees_only_the_agents_declared_variables_never_the_servers(runner, server_secret):
    source = "def environment() -> dict:\n    import os\n    return dict(os.environ)\n"
    context = ToolContext(organization_id=None, agent_id=None, env_vars={"WEATHER_API_KEY": "agent-key"})
    outcome = await runner.run(source_spec(source), "{}", context)
    environment = json.loads(outcome.tool_return)
    assert set(environment) == {"PATH", "HOME", "LANG", "WEATHER_API_KEY"}
    assert environment["WEATHER_API_KEY"] == "agent-key"
    assert server_secret not in outcome.tool_return
    assert "DJANGO_SETTINGS_MODULE" not in environment


async def test_a_tool_cannot_find_the_servers_secret_in_any_process_environment(runner, server_secret):
    source = """
def scan(secret: str) -> dict:
    import os
    seen, found = 0, []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        for name in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            seen += 1
            if secret.encode() in data:
                found.append(f"{pid}/{name}")
    return {"found": found, "processes": len([p for p in os.listdir("/proc") if p.isdigit()])}
"""
    outcome = await runner.run(source_spec(source), json.dumps({"secret": server_secret}), NO_CONTEXT)
    result = json.loads(outcome.tool_return)
    assert result["found"] == []
    assert result["processes"] <= 2  # its own pid namespace: the sandbox's init and the tool


async def test_a_tool_cannot_import_or_read_the_django_settings(runner):
    source = """
def peek(path: str) -> dict:
    import importlib
    result = {}
    for module in ("config.settings", "django", "tests.settings"):
        try:
            importlib.import_module(module)
            result[module] = "imported"
        except ImportError as exc:
            result[module] = type(exc).__name__
    try:
        with open(path) as handle:
            result["file"] = handle.read()
    except OSError as exc:
        result["file"] = type(exc).__name__
    return result
"""
    settings_file = Path(settings.BASE_DIR) / "config" / "settings.py"
    assert settings_file.exists()
    outcome = await runner.run(source_spec(source), json.dumps({"path": str(settings_file)}), NO_CONTEXT)
    assert json.loads(outcome.tool_return) == {
        "config.settings": "ModuleNotFoundError",
        "django": "ModuleNotFoundError",
        "tests.settings": "ModuleNotFoundError",
        "file": "FileNotFoundError",
    }


async def test_a_tool_cannot_see_the_project_folder_or_read_a_sqlite_database(runner, tmp_path):
    # A world-readable SQLite file holding a secret, like the embedded default's db.sqlite3.
    tmp_path.chmod(0o755)
    database = tmp_path / "db.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE provider_keys (key TEXT)")
        connection.execute("INSERT INTO provider_keys VALUES (?)", (SECRET,))
    database.chmod(0o644)
    source = """
def steal(project: str, databases: list[str]) -> dict:
    import os
    found = {}
    for path in databases:
        try:
            with open(path, "rb") as handle:
                found[path] = handle.read().decode("latin-1")
        except OSError as exc:
            found[path] = type(exc).__name__
    return {"databases": found, "project_exists": os.path.exists(project), "root": sorted(os.listdir("/"))}
"""
    databases = [str(database), str(Path(settings.BASE_DIR) / "db.sqlite3")]
    arguments = json.dumps({"project": str(settings.BASE_DIR), "databases": databases})
    outcome = await runner.run(source_spec(source), arguments, NO_CONTEXT)
    result = json.loads(outcome.tool_return)
    assert SECRET not in outcome.tool_return
    assert set(result["databases"].values()) == {"FileNotFoundError"}
    assert result["project_exists"] is False
    assert set(result["root"]) <= {
        "bin",
        "dev",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "proc",
        "root",
        "sbin",
        "tmp",
        "usr",
    }


async def test_a_tool_cannot_read_a_secret_file_outside_its_temp_folder(runner, root_only_secret_file):
    world_readable = root_only_secret_file.with_name("world-readable.txt")
    world_readable.write_text(SECRET)
    world_readable.chmod(0o644)
    try:
        source = """
def read(paths: list[str]) -> dict:
    result = {}
    for path in paths:
        try:
            with open(path) as handle:
                result[path] = handle.read()
        except OSError as exc:
            result[path] = type(exc).__name__
    return result
"""
        paths = [str(root_only_secret_file), str(world_readable), "/etc/shadow", "/root/.bash_history"]
        outcome = await runner.run(source_spec(source), json.dumps({"paths": paths}), NO_CONTEXT)
    finally:
        world_readable.unlink()
    assert SECRET not in outcome.tool_return
    assert set(json.loads(outcome.tool_return).values()) == {"FileNotFoundError"}


async def test_a_tool_cannot_write_outside_its_own_temp_folder(runner):
    source = """
def scribble() -> dict:
    import os
    result = {}
    for path in ("/usr/lib/evil.so", "/tmp/mine.txt", os.path.expanduser("~/notes.txt")):
        try:
            with open(path, "w") as handle:
                handle.write("x")
            result[path] = "written"
        except OSError as exc:
            result[path] = type(exc).__name__
    result["uid"] = os.getuid()
    return result
"""
    result = json.loads((await runner.run(source_spec(source), "{}", NO_CONTEXT)).tool_return)
    assert result["/usr/lib/evil.so"] in {"OSError", "PermissionError"}
    assert result["/tmp/mine.txt"] == "written"
    assert result["uid"] != 0


async def test_each_call_gets_a_fresh_temp_folder(runner):
    source = """
def remember() -> str:
    import os
    before = sorted(os.listdir("."))
    with open("left-behind.txt", "w") as handle:
        handle.write("x")
    return f"{os.getcwd()} {before}"
"""
    first = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    second = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    assert first.tool_return == second.tool_return == "/tmp []"


async def test_a_tool_cannot_become_root_again(runner):
    source = """
def escalate() -> dict:
    import os
    try:
        os.setuid(0)
        return {"setuid": "worked"}
    except PermissionError:
        return {"setuid": "denied", "uid": os.getuid(), "euid": os.geteuid()}
"""
    result = json.loads((await runner.run(source_spec(source), "{}", NO_CONTEXT)).tool_return)
    assert result["setuid"] == "denied"
    assert result["uid"] != 0
    assert result["euid"] != 0


async def test_a_tool_cannot_reach_services_on_the_servers_loopback(runner):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        source = """
def connect(port: int) -> str:
    import socket
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return "connected"
    except OSError as exc:
        return type(exc).__name__
"""
        outcome = await runner.run(source_spec(source), json.dumps({"port": port}), NO_CONTEXT)
    finally:
        listener.close()
    assert outcome.tool_return == "ConnectionRefusedError"


async def test_an_infinite_loop_is_stopped_by_the_cpu_limit(sandbox):
    runner = DefaultToolRunner(sandbox=sandbox, limits=CPU_BOUND_LIMITS)
    outcome = await runner.run(source_spec("def spin() -> str:\n    while True:\n        pass\n"), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return == "The tool used more than 1 s of CPU time and was stopped."
    assert model_view(outcome) == {
        "status": "Failed",
        "message": outcome.tool_return,
        "time": model_view(outcome)["time"],
    }


async def test_a_memory_bomb_fails_with_a_memory_error(runner):
    source = "def hog() -> str:\n    chunks = []\n    while True:\n        chunks.append(bytearray(16 * 1024 * 1024))\n"
    outcome = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert "MemoryError: the tool exceeded its memory limit of 256 MiB" in outcome.tool_return


async def test_a_fork_bomb_is_capped_by_the_process_limit_and_leaves_nothing_behind(runner):
    outcome = await runner.run(source_spec(FORK_BOMB), "{}", NO_CONTEXT)
    result = json.loads(outcome.tool_return)
    assert result["forked"] < FAST_LIMITS.max_processes
    assert result["error"] == "Resource temporarily unavailable"
    assert processes_of_uid(result["uid"]) == []


async def test_a_classic_fork_bomb_ends_in_an_error_result(runner):
    source = """
def bomb() -> str:
    import os
    while True:
        try:
            os.fork()
        except OSError:
            pass
"""
    started = time.monotonic()
    outcome = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return in {
        "The tool did not finish within 4 s and was stopped.",
        "The tool used more than 1 s of CPU time and was stopped.",
    }
    assert time.monotonic() - started < FAST_LIMITS.wall_seconds + 3


async def test_a_fork_bomb_whose_forks_crash_reports_the_failed_fork(runner):
    source = "def bomb() -> str:\n    import os\n    while True:\n        os.fork()\n"
    outcome = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return == (
        "Error executing function bomb: BlockingIOError: [Errno 11] Resource temporarily unavailable (tool line 4)"
    )


async def test_printing_gigabytes_is_cut_off_at_the_output_cap(runner):
    source = "def shout() -> str:\n    import sys\n    while True:\n        sys.stdout.write('x' * 1_000_000)\n"
    outcome = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return == "The tool wrote more than 64 KiB to stdout and stderr and was stopped."
    assert len("".join(outcome.stdout)) <= FAST_LIMITS.max_output_bytes


async def test_a_tool_that_never_returns_is_stopped_at_the_wall_clock_limit(runner):
    started = time.monotonic()
    outcome = await runner.run(
        source_spec("def wait() -> str:\n    import time\n    time.sleep(3600)\n"), "{}", NO_CONTEXT
    )
    assert outcome.status == "error"
    assert outcome.tool_return == "The tool did not finish within 4 s and was stopped."
    assert time.monotonic() - started < FAST_LIMITS.wall_seconds + 2


async def test_a_non_serializable_return_value_is_an_error_result(runner):
    outcome = await runner.run(source_spec("def odd() -> object:\n    return {1, 2}\n"), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return == (
        "Error executing function odd: it returned a set, which is not JSON-serializable; "
        "return a str, number, bool, None, list or dict"
    )


async def test_an_exception_reports_its_type_message_and_line(runner):
    source = "def divide(a: int, b: int) -> str:\n    ratio = a / b\n    return str(ratio)\n"
    outcome = await runner.run(source_spec(source), '{"a": 1, "b": 0}', NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return == "Error executing function divide: ZeroDivisionError: division by zero (tool line 2)"
    assert 'File "<tool>", line 2, in divide' in outcome.stderr[0]


async def test_writing_a_file_above_the_size_limit_fails_inside_the_tool(runner):
    source = """
def write() -> str:
    with open("big.bin", "wb") as handle:
        handle.write(b"x" * (2 * 1024 * 1024))
    return "done"
"""
    outcome = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert "OSError: [Errno 27] File too large" in outcome.tool_return


async def test_printing_a_fake_result_on_stdout_does_not_become_the_result(runner):
    source = 'def spoof() -> str:\n    print(\'{"ok": true, "value": "forged"}\')\n    return "genuine"\n'
    outcome = await runner.run(source_spec(source), "{}", NO_CONTEXT)
    assert outcome.tool_return == "genuine"


async def test_a_tool_that_exits_the_interpreter_is_an_error_result(runner):
    outcome = await runner.run(
        source_spec("def quit_now() -> str:\n    import os\n    os._exit(3)\n"), "{}", NO_CONTEXT
    )
    assert outcome.status == "error"
    assert outcome.tool_return == "The tool process exited with status 3 without returning a result."


async def test_concurrent_calls_run_side_by_side_under_different_uids(runner):
    source = "def who(n: int) -> list:\n    import os\n    return [n, os.getuid()]\n"
    spec = source_spec(source)
    outcomes = await asyncio.gather(*(runner.run(spec, json.dumps({"n": n}), NO_CONTEXT) for n in range(6)))
    results = [json.loads(outcome.tool_return) for outcome in outcomes]
    assert [n for n, _ in results] == list(range(6))
    assert len({uid for _, uid in results}) == 6


async def test_cancelling_a_call_kills_its_processes(tmp_path):
    uid = 1_899_000_000
    sandbox = BubblewrapBackend(
        bwrap=shutil.which("bwrap") or "bwrap",
        python=default_python(),
        uid_pool=UidPool(base=uid, count=1, lock_dir=tmp_path / "uids"),
    )
    source = "def wait() -> str:\n    import os, time\n    os.fork()\n    time.sleep(3600)\n"
    # Two processes need a CPU budget above 1 s without cgroups (tools/sandbox/cgroups.py).
    limits = SandboxLimits(wall_seconds=FAST_LIMITS.wall_seconds, cpu_seconds=4)
    call = asyncio.create_task(sandbox.execute(source, "wait", {}, {}, limits))
    for _ in range(200):
        if processes_of_uid(uid):
            break
        await asyncio.sleep(0.01)
    assert processes_of_uid(uid)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    for _ in range(200):
        if not processes_of_uid(uid):
            break
        await asyncio.sleep(0.01)
    assert processes_of_uid(uid) == []
