"""A real server process (Daphne on ``config.asgi``) for tests that drive it with ``letta-client``.

The server cannot see pytest-django's test database, so it gets its own: a fresh
SQLite file by default, migrated with ``manage.py migrate``, or the database named
by ``LIVE_SERVER_DATABASE_URL`` (emptied by ``migrate`` and ``flush``). It runs with
production settings (``DEBUG`` off, a ``SECRET_KEY`` of its own) and an API key
issued through the management command.

Use the session fixture, or ``sdk_client`` (letta-client 0.1.324 on that server, with its key)::

    def test_something(letta_server: LiveServer) -> None:
        client = Letta(base_url=letta_server.url, token=letta_server.api_key)

    def test_something_else(sdk_client: Letta) -> None:
        sdk_client.agents.list()

or ``start_live_server(folder, extra_env={...})`` for a server with other settings
(a fake LLM's base URL, ``REDIS_URL`` …), and ``start_inprocess_server`` for one on a scratch
database of the suite's engine that runs its runs in-process (no Redis, no Celery). This module is a pytest plugin (see
``tests/conftest.py``), so the fixture is there for every test.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from django.conf import settings

from tests.support.databases import scratch_database

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from letta_client import Letta

BASE_DIR = Path(settings.BASE_DIR)
STARTUP_TIMEOUT_S = 60.0
# Variables of the test process that must not leak into the server's production settings.
_DROPPED_ENV = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "DEBUG",
    "SECRET_KEY",
    "SECRET_KEY_FILE",
    "FIELD_ENCRYPTION_KEY",
    "FIELD_ENCRYPTION_KEY_FILE",
)
# A live server with no Redis and no Celery: runs execute in the web process.
INPROCESS_ENV = {"REDIS_URL": "", "CELERY_BROKER_URL": "", "RUN_EXECUTOR": "inprocess"}


@dataclass
class LiveServer:
    url: str
    api_key: str
    env: dict[str, str] = field(repr=False)
    log_path: Path

    def manage(self, *args: str) -> str:
        """Run ``manage.py`` against the server's database and settings; its stdout."""
        return run_manage(self.env, *args)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def api(self, *, timeout: float = 30) -> httpx.Client:
        """An HTTP client of the server's organization (its API key as the bearer)."""
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.api_key}"}, timeout=timeout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_manage(env: Mapping[str, str], *args: str) -> str:
    """Run ``manage.py`` with ``env`` (settings and database); its stdout, or a ``RuntimeError`` with its output."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def server_env(folder: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _DROPPED_ENV}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": os.environ.get("LIVE_SERVER_DATABASE_URL") or f"sqlite:///{folder / 'live.sqlite3'}",
            "SECRET_KEY": "live-server-test-secret-key-" + "k" * 40,
            "FIELD_ENCRYPTION_KEY": "live-server-field-encryption-key-" + "e" * 40,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "API_RATE_LIMIT": "100000/minute",
            "API_SESSION_RATE_LIMIT": "100000/minute",
            "PYTHONUNBUFFERED": "1",
            "EMAIL_URL": "consolemail://",  # sign-up links land in the server log
            # No Celery worker runs beside a live server: uploads are processed in its own thread.
            "FOLDERS_PROCESSING": "thread",
        }
    )
    env.update(extra_env or {})
    return env


def issue_api_key(env: Mapping[str, str]) -> str:
    """A key for a fresh organization, printed alone on the command's last line."""
    output = run_manage(env, "create_api_key", "--org", "live-test", "--email", "live@example.com", "--name", "live")
    return output.strip().splitlines()[-1]


def _wait_until_healthy(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The live server exited with {process.returncode}:\n{log_path.read_text()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/v1/health/", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"The live server did not answer within {STARTUP_TIMEOUT_S}s:\n{log_path.read_text()}")


@contextlib.contextmanager
def start_live_server(folder: Path, *, extra_env: Mapping[str, str] | None = None) -> Iterator[LiveServer]:
    """Migrate a dedicated database, issue a key, serve ``config.asgi`` with Daphne; stop it on exit."""
    env = server_env(folder, extra_env)
    run_manage(env, "migrate", "--noinput")
    if os.environ.get("LIVE_SERVER_DATABASE_URL"):
        run_manage(env, "flush", "--noinput")
    api_key = issue_api_key(env)

    port = free_port()
    log_path = folder / "daphne.log"
    daphne = Path(sys.executable).with_name("daphne")
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(daphne), "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            cwd=BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(url, process, log_path)
        yield LiveServer(url=url, api_key=api_key, env=env, log_path=log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@contextlib.contextmanager
def start_inprocess_server(folder: Path, *, extra_env: Mapping[str, str]) -> Iterator[LiveServer]:
    """A live server on a scratch database of its own (the suite's engine) that runs runs in-process."""
    with (
        scratch_database(folder) as database_url,
        start_live_server(folder, extra_env={**INPROCESS_ENV, **extra_env, "DATABASE_URL": database_url}) as live,
    ):
        yield live


@pytest.fixture(scope="session")
def letta_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with start_live_server(tmp_path_factory.mktemp("live-server")) as server:
        yield server


@pytest.fixture(scope="session")
def sdk_client(letta_server: LiveServer) -> Letta:
    """letta-client 0.1.324 on ``letta_server``, with its API key."""
    from letta_client import Letta  # here, not at the top: a session that drives no SDK does not import it

    return Letta(base_url=letta_server.url, token=letta_server.api_key)
