"""Both SDK lines against a live server and a real MCP server: letta-client 0.1.324 (the legacy name-keyed
routes, in this process) and 1.12.1 (Letta Code's ``mcpServers`` calls, in its own virtualenv)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from letta_client import Letta, StreamableHttpServerConfig

from tests.sdk.conftest import missing_versions, sdk_python
from tests.support.live_server import start_live_server

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.mcp_servers.conftest import RunningServer
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]

SCRIPT_1X = Path(__file__).with_name("sdk_1x_mcp.py")
VERSION_1X = "1.12.1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with start_live_server(
        tmp_path_factory.mktemp("mcp-sdk"), extra_env={"MCP_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"}
    ) as live:
        yield live


def test_letta_client_0_1_registers_lists_and_an_agent_calls_an_mcp_tool(
    server: LiveServer, mcp_server: Callable[..., RunningServer]
) -> None:
    client = Letta(base_url=server.url, token=server.api_key)
    url = mcp_server("tools").url

    added = client.tools.add_mcp_server(
        request=StreamableHttpServerConfig(server_name="weather", server_url=url, type="streamable_http")
    )
    listed = client.tools.list_mcp_servers()
    live = client.tools.list_mcp_tools_by_server("weather")
    weather = client.tools.add_mcp_tool("weather", "lookup_weather")
    delete = client.tools.add_mcp_tool("weather", "delete_records")
    agent = client.agents.create(name="mcp-0.1", model="demo/echo-1", tool_ids=[weather.id, delete.id])
    read = client.agents.messages.create(
        agent.id, messages=[{"role": "user", "content": "call lookup_weather with city=Rome"}]
    )
    destructive = client.agents.messages.create(
        agent.id, messages=[{"role": "user", "content": "call delete_records with table=users"}]
    )

    assert [config.server_name for config in added] == ["weather"]
    assert list(listed) == ["weather"]
    annotations = {tool.name: tool.annotations for tool in live}
    assert annotations["lookup_weather"].read_only_hint is True
    assert annotations["delete_records"].destructive_hint is True
    assert (weather.tool_type, weather.tags) == ("external_mcp", ["mcp:weather"])
    returns = [m.tool_return for m in read.messages if m.message_type == "tool_return_message"]
    assert returns == ["Sunny in Rome, 21 C"]
    assert destructive.stop_reason.stop_reason == "requires_approval"
    assert destructive.messages[-1].message_type == "approval_request_message"


def test_letta_client_0_1_answers_an_mcp_servers_question_as_an_approval(
    server: LiveServer, mcp_server: Callable[..., RunningServer]
) -> None:
    client = Letta(base_url=server.url, token=server.api_key)
    client.tools.add_mcp_server(
        request=StreamableHttpServerConfig(
            server_name="files", server_url=mcp_server("stateful").url, type="streamable_http"
        )
    )
    tool = client.tools.add_mcp_tool("files", "confirm_delete")
    agent = client.agents.create(name="asking-0.1", model="demo/echo-1", tool_ids=[tool.id])

    asked = client.agents.messages.create(
        agent.id, messages=[{"role": "user", "content": "call confirm_delete with path=/sdk"}]
    )
    [request] = [m for m in asked.messages if m.message_type == "approval_request_message"]
    answer = json.dumps({"confirm": True, "reason": "from the SDK"})
    approval = {"type": "approval", "approve": True, "tool_call_id": request.tool_call.tool_call_id, "reason": answer}
    answered = client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": [approval]}])

    assert asked.stop_reason.stop_reason == "requires_approval"
    assert request.tool_call.name == "confirm_delete"
    returns = [m.tool_return for m in answered.messages if m.message_type == "tool_return_message"]
    assert returns == ["accept: confirm=True reason='from the SDK' path=/sdk"]


def test_letta_client_1x_makes_letta_codes_mcp_calls_and_an_agent_calls_an_mcp_tool(
    server: LiveServer, mcp_server: Callable[..., RunningServer]
) -> None:
    if VERSION_1X in missing_versions():
        pytest.skip(f"letta-client {VERSION_1X} not in .sdk-venvs/: run make sdk-envs")
    result = subprocess.run(
        [str(sdk_python(VERSION_1X)), str(SCRIPT_1X), server.url, server.api_key, mcp_server("tools").url],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout.strip().splitlines()[-1])

    assert facts["sdk"] == VERSION_1X
    assert facts["created_type"] == "StreamableHTTPMcpServer"
    assert ["weather-1x", "streamable_http"] in facts["listed"]
    assert facts["auth_token"] == "Bearer ****0000"
    assert facts["refreshed"] == {
        "deleted": [],
        "updated": ["lookup_weather", "delete_records", "add_numbers", "fail_always"],
        "added": [],
    }
    assert facts["tools"] == ["add_numbers", "delete_records", "fail_always", "lookup_weather"]
    assert facts["ran"] == {"status": "success", "func_return": "42"}
    assert facts["name_keyed"] == ["add_numbers", "delete_records", "fail_always", "lookup_weather"]
    assert facts["weather"] == ["Sunny in Lima, 21 C"]
    assert (facts["destructive_stop"], facts["destructive_last"]) == ("requires_approval", "approval_request_message")
