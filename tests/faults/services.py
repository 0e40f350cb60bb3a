"""A Postgres cluster and a Redis server of the fault tests' own, which they may restart at will.

The suite's Postgres and Redis are shared with everything else running; faults go only into
these: ``initdb`` and ``pg_ctl`` make a throwaway cluster on a free port (as the ``postgres``
user when the tests run as root, since ``initdb`` refuses root), and ``redis-server`` runs on
another free port without persistence. Both restart on the same port, as a real service does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import redis

from tests.support.live_server import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

PG_BIN = Path(os.environ.get("FAULTS_PG_BIN", "/usr/lib/postgresql/15/bin"))
START_TIMEOUT_S = 30.0


def binaries_missing() -> str | None:
    """Why the private services cannot start here, or ``None``."""
    if not (PG_BIN / "initdb").exists() or not (PG_BIN / "pg_ctl").exists():
        return f"no initdb/pg_ctl in {PG_BIN} (set FAULTS_PG_BIN)"
    if shutil.which("redis-server") is None:
        return "no redis-server on the PATH"
    return None


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@dataclass
class PrivatePostgres:
    folder: Path
    port: int

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/faults"

    def _pg_ctl(self, *args: str) -> None:
        command = [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "postgres.log"), *args]
        subprocess.run(_as_postgres(command), check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60"
        self._pg_ctl("-w", "-o", options, "start")

    def restart(self) -> None:
        """A fast shutdown (every connection is cut, ``AdminShutdown``), then the same port again."""
        self._pg_ctl("-w", "-m", "fast", "stop")
        self.start()

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._pg_ctl("-w", "-m", "immediate", "stop")


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    folder = Path(tempfile.mkdtemp(prefix="faults-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    server = PrivatePostgres(folder=folder, port=free_port())
    subprocess.run(
        _as_postgres([str(PG_BIN / "initdb"), "-D", str(server.data), "-U", "postgres", "-A", "trust", "--no-sync"]),
        check=True,
        capture_output=True,
        timeout=120,
    )
    server.start()
    try:
        with psycopg.connect(f"postgres://postgres@127.0.0.1:{server.port}/postgres", autocommit=True) as admin:
            admin.execute("CREATE DATABASE faults")
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class PrivateRedis:
    folder: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with (self.folder / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                cwd=self.folder,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(redis.ConnectionError):
                if redis.Redis(port=self.port, socket_timeout=1).ping():
                    return
            assert time.monotonic() < deadline, (self.folder / "redis.log").read_text()
            time.sleep(0.1)

    def restart(self, *, graceful: bool = True) -> None:
        """Redis goes away (every connection and every key is lost) and comes back on the same port:
        shut down as ``systemctl restart`` does (SIGTERM), or killed (SIGKILL) as when its host dies."""
        self.stop(signal.SIGTERM if graceful else signal.SIGKILL)
        self.start()

    def stop(self, how: signal.Signals = signal.SIGKILL) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(how)
            self.process.wait(timeout=10)


@contextlib.contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    folder = Path(tempfile.mkdtemp(prefix="faults-redis-"))
    server = PrivateRedis(folder=folder, port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
