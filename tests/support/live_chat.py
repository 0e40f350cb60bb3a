"""Live servers of the chat (pytest plugin, see tests/conftest.py): Daphne running the embedded
default with the demo organization seeded, Daphne handing runs to a real Celery worker over
Redis, and the chat's WebSocket on either as a logged-in tab opens it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from django.conf import settings
from playwright.sync_api import Page, expect
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect

from tests.support.live_server import INPROCESS_ENV, LiveServer, start_live_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

LIVE_SETTINGS = "tests.support.live_settings"
DEMO_EMAIL, DEMO_PASSWORD = "demo@example.com", "demo-password"
WORKER_STARTUP_S = 60.0


@dataclass
class ChatServer:
    """A live server with the demo organization seeded (``manage.py seed_demo``)."""

    server: LiveServer
    demo_agent_id: str
    demo_api_key: str

    @property
    def url(self) -> str:
        return self.server.url

    def api(self) -> httpx.Client:
        """A REST client acting for the demo organization."""
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.demo_api_key}"}, timeout=10)

    def new_agent(self, name: str, *, tools: tuple[str, ...] = ("roll_dice", "get_secret_code"), **fields: Any) -> str:
        """A fresh agent of the demo organization with the seeded tools (an id), so tests never share one."""
        with self.api() as api:
            tool_ids = [
                api.get("/v1/tools/", params={"name": tool}).raise_for_status().json()[0]["id"] for tool in tools
            ]
            body = {"name": name, "model": "demo/echo-1", "tool_ids": tool_ids, **fields}
            return str(api.post("/v1/agents/", json=body).raise_for_status().json()["id"])

    def shell_for_agent(self, agent_id: str, code: str) -> str:
        """Run ``code`` in the server's ``manage.py shell`` with ``AGENT_PK`` standing for the agent's key."""
        return self.server.manage("shell", "-c", code.replace("AGENT_PK", agent_id.removeprefix("agent-")))

    def history(self, session: httpx.Client, agent_id: str) -> list[dict[str, Any]]:
        """Every row of the chat, oldest first, as the chat's history endpoint serves them."""
        rows: list[dict[str, Any]] = []
        before = None
        while True:
            params = {"before": before} if before else {}
            page = session.get(f"/agents/{agent_id}/history/", params=params).raise_for_status().json()
            rows[:0] = page["rows"]
            if not page["has_more"]:
                return rows
            before = page["rows"][0]["row"]["id"]

    def sign_up(self, page: Page, *, email: str, name: str, organization: str) -> None:
        """Sign a new person up in the browser and follow the confirmation link the server mailed
        (the console backend prints it to the server's log); ends on the new organization's home."""
        page.goto(f"{self.url}/accounts/signup/")
        page.get_by_label("Email").fill(email)
        page.get_by_label("Name:", exact=True).fill(name)
        page.get_by_label("Password").fill("a-long-and-unusual-passphrase")
        page.get_by_label("Organization name").fill(organization)
        page.get_by_role("button", name="Sign up").click()
        expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
        links = re.findall(r"http://\S+/accounts/signup/confirm/\S+/", self.server.log())
        assert links, "no confirmation link in the server's log"
        page.goto(links[-1])
        page.get_by_role("button", name="Create my account").click()
        page.wait_for_url(f"{self.url}/")

    def login(self) -> httpx.Client:
        """An HTTP session logged in as the demo user."""
        session = httpx.Client(base_url=self.url, timeout=10, follow_redirects=True)
        page = session.get("/accounts/login/").raise_for_status()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        session.post(
            "/accounts/login/",
            data={"username": DEMO_EMAIL, "password": DEMO_PASSWORD, "csrfmiddlewaretoken": token[1]},
            headers={"Referer": f"{self.url}/accounts/login/"},
        ).raise_for_status()
        assert "sessionid" in session.cookies
        return session


@contextlib.contextmanager
def start_chat_server(folder: Path, *, extra_env: dict[str, str]) -> Iterator[ChatServer]:
    env = {"DJANGO_SETTINGS_MODULE": LIVE_SETTINGS, **extra_env}
    with start_live_server(folder, extra_env=env) as server:
        seeded = server.manage("seed_demo", "--url", server.url)
        agent_id = re.search(r"\[(agent-[0-9a-f-]+)\]", seeded)
        assert agent_id is not None, seeded
        yield ChatServer(server=server, demo_agent_id=agent_id[1], demo_api_key=seeded.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def chat_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatServer]:
    """The embedded default as a person runs it: SQLite, in-memory channel layer, runs in-process, demo model."""
    env = INPROCESS_ENV | {
        "DEMO_TOKEN_DELAY": "0.04",
        "RUN_SWEEP_INTERVAL_SECONDS": "1",
    }
    with start_chat_server(tmp_path_factory.mktemp("chat-server"), extra_env=env) as server:
        yield server


def celery_worker_command(queue: str, hostname: str, *options: str) -> list[str]:
    """A solo-pool Celery worker of ``config`` on ``queue`` (one task at a time), named ``hostname``."""
    celery = str(Path(sys.executable).with_name("celery"))
    return [celery, "-A", "config", "worker", "--pool=solo", "-Q", queue, "--loglevel=INFO", "--without-mingle",
            "--without-gossip", "--hostname", hostname, *options]  # fmt: skip


def redis_test_url() -> str:
    return os.environ.get("CHAT_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")


@dataclass
class CeleryStack:
    """Daphne handing runs to Celery over Redis, and a worker that can be killed and restarted."""

    chat: ChatServer
    folder: Path
    worker: subprocess.Popen[bytes] | None = None

    def start_worker(self, *, beat: bool = False) -> subprocess.Popen[bytes]:
        """A worker on the stack's queue; with ``beat``, running Celery beat's schedule too (``-B``)."""
        log = (self.folder / "worker.log").open("ab")
        queue = self.chat.server.env["CELERY_TASK_DEFAULT_QUEUE"]
        with_beat = ["--beat", "--schedule", str(self.folder / "beat-schedule")] if beat else []
        self.worker = subprocess.Popen(
            celery_worker_command(queue, f"chat-test-{uuid.uuid4().hex[:8]}@%h", *with_beat),
            cwd=settings.BASE_DIR,
            env=self.chat.server.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + WORKER_STARTUP_S
        while " ready." not in self.worker_log():
            if self.worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"The Celery worker did not start:\n{self.worker_log()}")
            time.sleep(0.2)
        return self.worker

    def kill_worker(self) -> None:
        assert self.worker is not None
        self.worker.send_signal(signal.SIGKILL)
        self.worker.wait(timeout=10)
        self.worker = None

    def stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.terminate()
            try:
                self.worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait(timeout=5)
            self.worker = None

    def worker_log(self) -> str:
        path = self.folder / "worker.log"
        return path.read_text(errors="replace") if path.exists() else ""


@pytest.fixture(scope="module")
def celery_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CeleryStack]:
    folder = tmp_path_factory.mktemp("celery-stack")
    name = f"chat-test-{uuid.uuid4().hex[:12]}"
    env = {
        "REDIS_URL": redis_test_url(),
        "CELERY_BROKER_URL": redis_test_url(),
        "RUN_EXECUTOR": "celery",
        "CELERY_TASK_DEFAULT_QUEUE": name,
        "CHANNEL_LAYER_PREFIX": name,
        "DEMO_TOKEN_DELAY": "0.05",
        # A short lease, so a run whose worker died is swept within seconds (stale after 2 x 2 s).
        "AGENT_TURN_LOCK_SECONDS": "2",
        # Beat's upkeep every second, for the worker started with beat.
        "UPKEEP_BEAT_SECONDS": "1",
    }
    with start_chat_server(folder, extra_env=env) as chat:
        stack = CeleryStack(chat=chat, folder=folder)
        stack.start_worker()
        try:
            yield stack
        finally:
            stack.stop_worker()


class LiveSocket:
    """The chat's WebSocket on a live server, as a logged-in browser tab opens it."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[dict[str, Any]] = []

    async def send(self, frame: dict[str, Any]) -> None:
        await self.connection.send(json.dumps(frame))

    async def until(self, done: Any, timeout: float = 30) -> list[dict[str, Any]]:
        """Frames up to and including the first for which ``done(frame)`` holds."""
        received: list[dict[str, Any]] = []
        async with asyncio.timeout(timeout):
            while True:
                frame = json.loads(await self.connection.recv())
                received.append(frame)
                self.frames.append(frame)
                if done(frame):
                    return received


@contextlib.asynccontextmanager
async def live_socket(chat: ChatServer, session: httpx.Client, agent_id: str) -> AsyncIterator[LiveSocket]:
    url = chat.url.replace("http://", "ws://") + f"/ws/agents/{agent_id}/"
    cookie = "; ".join(f"{name}={value}" for name, value in session.cookies.items())
    async with ws_connect(url, origin=chat.url, additional_headers={"Cookie": cookie}) as connection:
        yield LiveSocket(connection)
