"""Real MCP servers (``tests/mcp_servers/servers.py``) in their own processes, one per kind and transport."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mcp_servers import services
from tests.support.browser import demo_tab
from tests.support.browser import screenshots as take_screenshots
from tests.support.live_chat import start_chat_server
from tests.support.live_server import INPROCESS_ENV

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    from playwright.sync_api import Browser, Page
    from pytest_django.fixtures import SettingsWrapper

    from accounts.models import Organization
    from mcp_servers.models import MCPServer
    from tests.support.live_chat import ChatServer

SERVERS = Path(__file__).with_name("servers.py")
STARTUP_SECONDS = 20.0
PATHS = {"streamable_http": "/mcp", "sse": "/sse"}


@dataclass
class RunningServer:
    kind: str
    transport: str
    url: str
    process: subprocess.Popen[bytes]


def add_server(
    organization: Organization, url: str, name: str = "notes", server_type: str = "streamable_http", **fields: Any
) -> MCPServer:
    """``url`` added as an MCP server of ``organization`` (its tools registered), as the page adds one."""
    return services.server_create(
        organization=organization, user=None, server_name=name, server_type=server_type, server_url=url, **fields
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The MCP test server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError("The MCP test server did not start listening")


def start_server(kind: str, transport: str = "streamable_http") -> RunningServer:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS), kind, transport, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_listening(port, process)
    return RunningServer(kind, transport, f"http://127.0.0.1:{port}{PATHS[transport]}", process)


def stop_server(server: RunningServer) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


@pytest.fixture(scope="session")
def mcp_server() -> Iterator[Callable[..., RunningServer]]:
    """``mcp_server(kind, transport)``: a running server, started once per session (a dead one is restarted)."""
    running: dict[tuple[str, str], RunningServer] = {}

    def get(kind: str, transport: str = "streamable_http") -> RunningServer:
        server = running.get((kind, transport))
        if server is None or server.process.poll() is not None:
            server = running[(kind, transport)] = start_server(kind, transport)
        return server

    yield get
    for server in running.values():
        stop_server(server)


@pytest.fixture(autouse=True)
def _mcp_settings(settings: SettingsWrapper) -> None:
    """The test servers listen on loopback, which the operator allows here; short timeouts keep tests quick."""
    settings.MCP_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    settings.MCP_CONNECT_TIMEOUT = 5.0
    settings.MCP_LIST_TOOLS_TIMEOUT = 5.0
    settings.MCP_CALL_TIMEOUT = 5.0


# --- the browser modules: a chat server of each module's own, and a demo tab on it ---------------


@pytest.fixture(scope="module")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatServer]:
    """A chat server for this module alone, in process, with MCP servers on 127.0.0.1 allowed."""
    env = INPROCESS_ENV | {"DEMO_TOKEN_DELAY": "0", "MCP_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"}
    folder = tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2])
    with start_chat_server(folder, extra_env=env) as chat:
        yield chat


@pytest.fixture
def page(browser: Browser, server: ChatServer) -> Iterator[Page]:
    with demo_tab(browser, server.url, timeout_ms=20_000) as tab:
        yield tab


def screenshots(page: Page, name: str) -> None:
    """Screenshots at 1280x800 and 390x844 into ``MCP_SCREENSHOTS`` (a folder), when it is set."""
    take_screenshots(page, os.environ.get("MCP_SCREENSHOTS"), name)
