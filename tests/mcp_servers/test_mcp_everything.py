"""The protocol's reference server (``@modelcontextprotocol/server-everything`` from npm, ``make mcp-everything``):
its tools are listed with their schemas and annotations, and results beyond text reach the caller said out loud."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.conf import settings

from tests.mcp_servers.conftest import add_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rest_framework.test import APIClient

    from tests.conftest import Cast

EVERYTHING = (
    Path(settings.BASE_DIR) / ".mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
if shutil.which("node") is None or not EVERYTHING.exists():
    pytest.skip(
        "the MCP reference server is not installed (needs Node): run make mcp-everything", allow_module_level=True
    )

pytestmark = pytest.mark.django_db
PATHS = {"streamableHttp": "/mcp", "sse": "/sse"}


@pytest.fixture(scope="module", params=["streamableHttp", "sse"])
def everything_url(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        ["node", str(EVERYTHING), request.param],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            break
        time.sleep(0.05)
    transport = "streamable_http" if request.param == "streamableHttp" else "sse"
    yield transport, f"http://127.0.0.1:{port}{PATHS[request.param]}"
    process.terminate()
    process.wait(timeout=5)


def run(api: APIClient, server_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    tools = {row["name"]: row["id"] for row in api.get(f"/v1/mcp-servers/{server_id}/tools").json()}
    response = api.post(f"/v1/mcp-servers/{server_id}/tools/{tools[tool]}/run", {"args": args}, format="json")
    assert response.status_code == 200, response.content
    return dict(response.json())


def test_the_reference_servers_tools_are_registered_and_called(
    alice_api: APIClient, cast: Cast, everything_url: tuple[str, str]
) -> None:
    transport, url = everything_url
    server = add_server(cast.org_a, url, "everything", transport)

    live = {tool["name"]: tool for tool in alice_api.get("/v1/tools/mcp/servers/everything/tools").json()}
    echo = run(alice_api, server.public_id, "echo", {"message": "hello"})
    summed = run(alice_api, server.public_id, "get-sum", {"a": 2, "b": 3})
    image = run(alice_api, server.public_id, "get-tiny-image", {})

    assert {"echo", "get-sum", "get-tiny-image"} <= set(live)
    assert all(tool["health"]["status"] != "INVALID" for tool in live.values())
    assert echo == {
        "status": "success",
        "func_return": "Echo: hello",
        "agent_state": None,
        "stdout": None,
        "stderr": None,
        "sandbox_config_fingerprint": None,
    }
    assert "5" in summed["func_return"]
    assert "[image image/png," in image["func_return"]
