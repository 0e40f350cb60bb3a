"""Letta Code's MCP calls and an agent's MCP tool call, made by letta-client 1.x in its own virtualenv.

Usage: ``python sdk_1x_mcp.py BASE_URL API_KEY MCP_URL``; prints one JSON object of facts. Run by the
SDK's interpreter, not the project's: it imports nothing from the project.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import letta_client
from letta_client import Letta


def main(base_url: str, api_key: str, mcp_url: str) -> dict[str, Any]:
    client = Letta(base_url=base_url, api_key=api_key)
    for earlier in client.mcp_servers.list():  # the organization's tool names are free for this server's tools
        client.mcp_servers.delete(earlier.id)
    created = client.mcp_servers.create(
        server_name="weather-1x",
        config={"mcp_server_type": "streamable_http", "server_url": mcp_url, "auth_token": "sk-1x-token-000000"},
    )
    listed = client.mcp_servers.list()
    refreshed = client.mcp_servers.refresh(created.id)
    tools = client.mcp_servers.tools.list(created.id)
    by_name = {tool.name: tool for tool in tools}
    ran = client.mcp_servers.tools.run(by_name["add_numbers"].id, mcp_server_id=created.id, args={"a": 20, "b": 22})
    name_keyed = client.get("/v1/tools/mcp/servers/weather-1x/tools", cast_to=object)
    agent = client.agents.create(
        name="mcp-1x", model="demo/echo-1", tool_ids=[by_name["lookup_weather"].id, by_name["delete_records"].id]
    )
    weather = client.agents.messages.create(
        agent.id, messages=[{"role": "user", "content": "call lookup_weather with city=Lima"}]
    )
    destructive = client.agents.messages.create(
        agent.id, messages=[{"role": "user", "content": "call delete_records with table=users"}]
    )
    return {
        "sdk": letta_client.__version__,
        "created_type": type(created).__name__,
        "listed": [(server.server_name, server.mcp_server_type) for server in listed],
        "auth_token": created.auth_token,
        "refreshed": refreshed,
        "tools": sorted(by_name),
        "ran": {"status": ran.status, "func_return": ran.func_return},
        "name_keyed": sorted(tool["name"] for tool in name_keyed),
        "weather": [
            message.tool_return for message in weather.messages if message.message_type == "tool_return_message"
        ],
        "destructive_stop": destructive.stop_reason.stop_reason if destructive.stop_reason else None,
        "destructive_last": destructive.messages[-1].message_type,
    }


if __name__ == "__main__":
    sys.stdout.write(json.dumps(main(*sys.argv[1:4]), default=str) + "\n")
