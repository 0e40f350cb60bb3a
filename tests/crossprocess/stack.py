"""Several web processes and Celery workers on one Postgres and one Redis, as production runs them.

``ProcessStack`` migrates and seeds one database, then starts Daphne processes
and Celery workers (``start``; one Celery run at a time each) that share it, the Redis channel
layer and one Celery queue; any of them can be killed (SIGKILL) or stopped and
started again. The cross-process tests drive it, and ``benchmarks/multiprocess.py``
puts nginx in front of it.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from celery import Celery

from tests.support.live_chat import LIVE_SETTINGS, ChatServer, celery_worker_command
from tests.support.live_server import LiveServer, free_port, run_manage, server_env

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

ROOT = Path(__file__).resolve().parent.parent.parent
STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 5.0


@dataclass
class StackProcess:
    """One started process: a web process (with a URL) or a worker (with a Celery host name)."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    url: str = ""
    hostname: str = ""

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


@dataclass
class ProcessStack:
    folder: Path
    env: dict[str, str]
    api_key: str = ""
    demo_agent_id: str = ""
    webs: dict[str, StackProcess] = field(default_factory=dict)
    workers: dict[str, StackProcess] = field(default_factory=dict)

    @property
    def queue(self) -> str:
        return self.env["CELERY_TASK_DEFAULT_QUEUE"]

    def manage(self, *args: str) -> str:
        return run_manage(self.env, *args)

    def chat(self, web: str) -> ChatServer:
        """The chat tests' client helpers (login, new agent, history) pointed at web process ``web``."""
        server = LiveServer(
            url=self.webs[web].url, api_key=self.api_key, env=self.env, log_path=self.webs[web].log_path
        )
        return ChatServer(server=server, demo_agent_id=self.demo_agent_id, demo_api_key=self.api_key)

    def start(self, *, webs: tuple[str, ...] = (), workers: tuple[str, ...] = ()) -> None:
        """Start web processes ``webs`` and workers ``workers`` side by side; return once all are ready."""
        started = [self._start_web(name) for name in webs] + [self._start_worker(name) for name in workers]
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        for process in started:
            while not self._ready(process):
                if not process.alive or time.monotonic() > deadline:
                    raise RuntimeError(f"{process.name} did not start:\n{process.log()}")
                time.sleep(0.2)

    def add_web(self, name: str) -> StackProcess:
        """Start (or start again, on the same port) Daphne process ``name``; return once it answers."""
        self.start(webs=(name,))
        return self.webs[name]

    @staticmethod
    def _ready(process: StackProcess) -> bool:
        if not process.url:
            return " ready." in process.log()
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(f"{process.url}/v1/health/", timeout=2).status_code == 200
        return False

    def _start_web(self, name: str) -> StackProcess:
        previous = self.webs.get(name)
        port = int(previous.url.rsplit(":", 1)[1]) if previous else free_port()
        log_path = self.folder / f"{name}.log"
        daphne = Path(sys.executable).with_name("daphne")
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                [str(daphne), "-b", "127.0.0.1", "-p", str(port), "--proxy-headers", "config.asgi:application"],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        web = StackProcess(name=name, process=process, log_path=log_path, url=f"http://127.0.0.1:{port}")
        self.webs[name] = web
        return web

    def _start_worker(self, name: str) -> StackProcess:
        log_path = self.folder / f"{name}.log"
        log_path.unlink(missing_ok=True)
        hostname = f"{name}-{uuid.uuid4().hex[:6]}@{socket.gethostname()}"
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                celery_worker_command(self.queue, hostname),
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        worker = StackProcess(name=name, process=process, log_path=log_path, hostname=hostname)
        self.workers[name] = worker
        return worker

    @contextlib.contextmanager
    def only(self, name: str) -> Iterator[StackProcess]:
        """Worker ``name`` alone takes new runs meanwhile: the others stop consuming (Celery remote control)."""
        others = [worker for worker in self.workers.values() if worker.name != name and worker.alive]
        app = Celery(broker=self.env["CELERY_BROKER_URL"])
        try:
            for worker in others:
                replies = app.control.cancel_consumer(self.queue, destination=[worker.hostname], reply=True, timeout=10)
                assert replies, f"{worker.name} did not answer the remote control"
            yield self.workers[name]
        finally:
            for worker in others:
                if worker.alive:
                    app.control.add_consumer(self.queue, destination=[worker.hostname], reply=True, timeout=10)
            app.close()

    def runs_executed(self, worker: str) -> int:
        """How many run tasks worker ``worker`` has finished (its log's ``succeeded`` lines)."""
        return len(re.findall(r"Task agents\.tasks\.execute_run_task\[[^\]]+\] succeeded", self.workers[worker].log()))

    # --- ending processes ------------------------------------------------------------------

    def kill(self, name: str) -> None:
        """SIGKILL web process or worker ``name``: no shutdown handler runs, as when a machine dies."""
        process = (self.webs.get(name) or self.workers[name]).process
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        """SIGTERM every process, SIGKILL what is still there a few seconds later."""
        running = [p.process for p in [*self.webs.values(), *self.workers.values()] if p.alive]
        for process in running:
            process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


@contextlib.contextmanager
def process_stack(
    folder: Path, *, database_url: str, redis_url: str, extra_env: Mapping[str, str]
) -> Iterator[ProcessStack]:
    """A migrated, seeded database and a queue and channel prefix of their own; no process started yet."""
    name = f"xp-{uuid.uuid4().hex[:12]}"
    env = server_env(
        folder,
        {
            "DJANGO_SETTINGS_MODULE": LIVE_SETTINGS,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "CELERY_BROKER_URL": redis_url,
            "RUN_EXECUTOR": "celery",
            "CELERY_TASK_DEFAULT_QUEUE": name,
            "CHANNEL_LAYER_PREFIX": name,
            **extra_env,
        },
    )
    stack = ProcessStack(folder=folder, env=env)
    stack.manage("migrate", "--noinput")
    seeded = stack.manage("seed_demo", "--url", "http://127.0.0.1")
    agent_id = re.search(r"\[(agent-[0-9a-f-]+)\]", seeded)
    assert agent_id is not None, seeded
    stack.demo_agent_id = agent_id[1]
    stack.api_key = seeded.strip().splitlines()[-1]
    try:
        yield stack
    finally:
        stack.stop_all()
