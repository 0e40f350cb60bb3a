"""One organization cannot see, call or use another's MCP server or its tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from agents import services
from tests.factories import McpToolFactory
from tests.mcp_servers.conftest import add_server

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.mcp_servers.conftest import RunningServer

pytestmark = pytest.mark.django_db


def test_another_orgs_servers_are_in_no_list(
    alice_api: APIClient, charlie_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    add_server(cast.org_a, mcp_server("tools", "sse").url, "alices", "sse", token="sk-alices-token-000000")

    assert charlie_api.get("/v1/mcp-servers/").json() == []
    assert charlie_api.get("/v1/tools/mcp/servers").json() == {}
    assert "alices" in alice_api.get("/v1/tools/mcp/servers").json()


def test_a_tool_naming_another_orgs_server_cannot_reach_it(
    charlie_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    add_server(cast.org_a, mcp_server("tools").url, "alices")
    forged = McpToolFactory(
        organization=cast.org_b,
        name="lookup_weather",
        server="alices",
        json_schema={
            "name": "lookup_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    )
    agent = services.agent_create(
        organization=cast.org_b, name="charlies", model="demo/echo-1", tool_ids=[forged.public_id]
    )

    body = charlie_api.post(
        f"/v1/agents/{agent.public_id}/messages",
        {"messages": [{"role": "user", "content": "call lookup_weather with city=Rome"}]},
        format="json",
    ).json()

    [result] = [m for m in body["messages"] if m["message_type"] == "tool_return_message"]
    assert result["status"] == "error"
    assert result["tool_return"] == "The MCP server of lookup_weather is not registered in this organization."


def test_the_agent_form_says_which_mcp_server_a_tool_comes_from(
    client: Any, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    add_server(cast.org_a, mcp_server("tools").url, "weather")
    agent = services.agent_create(organization=cast.org_a, name="form", model="demo/echo-1")
    client.force_login(cast.alice)

    page = client.get(f"/agents/{agent.public_id}/edit/").content.decode()

    assert '<code>lookup_weather</code></label> <span class="badge">from the MCP server weather</span>' in page
