"""An agent calls MCP tools on real servers: approvals from annotations, and servers that misbehave.

A hung server, one that dies mid-call, one with an invalid schema and one that wants OAuth
each end as a tool error or a clear refusal, never as a stuck run.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from agents import services
from agents.models import Agent, Run
from mcp_servers import client
from mcp_servers import services as mcp_services
from mcp_servers.errors import MCPAuthorizationRequired, MCPElicitationRequired
from mcp_servers.models import MCPServer
from tests.mcp_servers.conftest import add_server
from tools.models import Tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.test import APIClient

    from accounts.models import Organization
    from tests.conftest import Cast
    from tests.mcp_servers.conftest import RunningServer

pytestmark = pytest.mark.django_db


def agent_with(organization: Organization, kind: str, url: str, **server: Any) -> Agent:
    added = add_server(organization, url, kind, server.get("type", "streamable_http"))
    tool_ids = [tool.public_id for tool in Tool.objects.filter(metadata__mcp__server_id=added.public_id)]
    return services.agent_create(
        organization=organization, name=f"{kind}-agent", model="demo/echo-1", tool_ids=tool_ids
    )


def send(api: APIClient, agent: Agent, text: str) -> dict[str, Any]:
    body = {"messages": [{"role": "user", "content": text}]}
    response = api.post(f"/v1/agents/{agent.public_id}/messages", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def of_type(body: dict[str, Any], message_type: str) -> list[dict[str, Any]]:
    return [message for message in body["messages"] if message["message_type"] == message_type]


@pytest.mark.parametrize("transport", ["streamable_http", "sse"])
def test_an_agent_calls_a_read_only_mcp_tool_without_asking(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], transport: str
) -> None:
    agent = agent_with(cast.org_a, "tools", mcp_server("tools", transport).url, type=transport)

    body = send(alice_api, agent, "call lookup_weather with city=Paris")

    assert not of_type(body, "approval_request_message")
    [result] = of_type(body, "tool_return_message")
    assert (result["status"], result["tool_return"]) == ("success", "Sunny in Paris, 21 C")


def test_a_destructive_mcp_tool_stops_for_approval_and_runs_once_approved(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    agent = agent_with(cast.org_a, "tools", mcp_server("tools").url)

    body = send(alice_api, agent, "call delete_records with table=users")

    assert body["stop_reason"]["stop_reason"] == "requires_approval"
    [request] = of_type(body, "approval_request_message")
    assert request["tool_call"]["name"] == "delete_records"
    call_id = request["tool_call"]["tool_call_id"]
    answer = {"messages": [{"approvals": [{"type": "approval", "tool_call_id": call_id, "approve": True}]}]}
    approved = alice_api.post(f"/v1/agents/{agent.public_id}/messages", answer, format="json").json()
    [result] = of_type(approved, "tool_return_message")
    assert result["tool_return"] == "Deleted every record of users"


def test_the_agents_own_policy_overrides_the_servers_destructive_hint(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    agent = agent_with(cast.org_a, "tools", mcp_server("tools").url)
    services.agent_set_tool_approval(agent=agent, tool_name="delete_records", requires_approval=False)

    body = send(alice_api, agent, "call delete_records with table=logs")

    assert not of_type(body, "approval_request_message")
    assert of_type(body, "tool_return_message")[0]["tool_return"] == "Deleted every record of logs"


def test_a_hung_server_never_holds_a_run_past_the_call_timeout(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], settings: Any
) -> None:
    agent = agent_with(cast.org_a, "hang", mcp_server("hang").url)
    settings.MCP_CONNECT_TIMEOUT = 1.0
    settings.MCP_CALL_TIMEOUT = 1.5
    started = time.monotonic()

    body = send(alice_api, agent, "call wait_forever with note=hello")

    elapsed = time.monotonic() - started
    [result] = of_type(body, "tool_return_message")
    assert result["status"] == "error"
    assert "did not answer within 1.5 s" in result["tool_return"]
    assert elapsed < 2.5 + 3.0, f"the run took {elapsed:.1f} s"
    assert Run.objects.get(agent=agent).status == "completed"


def test_a_server_that_dies_mid_call_is_a_tool_error(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    agent = agent_with(cast.org_a, "disconnect", mcp_server("disconnect").url)
    started = time.monotonic()

    body = send(alice_api, agent, "call crash with note=boom")

    [result] = of_type(body, "tool_return_message")
    assert result["status"] == "error"
    elapsed = time.monotonic() - started
    assert "The MCP server disconnect broke the connection while calling crash" in result["tool_return"]
    assert elapsed < 5 + 5 + 3.0
    assert Run.objects.get(agent=agent).status == "completed"


def test_a_tool_with_an_invalid_schema_is_refused_clearly(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    server = add_server(cast.org_a, mcp_server("invalid").url, "invalid")

    registered = set(Tool.objects.filter(metadata__mcp__server_id=server.public_id).values_list("name", flat=True))
    live = alice_api.get("/v1/tools/mcp/servers/invalid/tools").json()
    forced = alice_api.post("/v1/tools/mcp/servers/invalid/broken")

    assert registered == {"fine"}
    broken = next(tool for tool in live if tool["name"] == "broken")
    assert broken["health"]["status"] == "INVALID"
    assert "not a valid JSON schema" in broken["health"]["reasons"][0]
    assert forced.status_code == 400
    assert "not a valid JSON schema" in json.dumps(forced.json())


def test_a_server_that_wants_oauth_is_a_clear_refusal(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    url = mcp_server("oauth").url
    server = add_server(cast.org_a, url, "oauth")

    response = alice_api.get("/v1/tools/mcp/servers/oauth/tools")

    assert response.status_code == 502
    assert "requires authorization (HTTP 401)" in response.json()["detail"]
    server.refresh_from_db()
    assert "HTTP 401" in server.last_error
    with pytest.raises(MCPAuthorizationRequired):
        mcp_services.live_tools(server=server)


def test_cancelling_the_call_ends_it_at_once(mcp_server: Callable[..., RunningServer]) -> None:
    """A cancelled run cancels its task; the MCP call in it ends then, not at its timeout."""
    server = MCPServer(server_name="hang", server_type="streamable_http", server_url=mcp_server("hang").url)
    endpoint = client.endpoint_for(server)

    async def cancel_after_a_moment() -> float:
        call = asyncio.ensure_future(client.call_tool(endpoint, "wait_forever", {"note": "x"}))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        return time.monotonic() - started

    assert asyncio.run(cancel_after_a_moment()) < 1.0


def test_a_call_outside_a_run_that_the_server_asks_input_for_ends_with_an_error_naming_the_question(
    mcp_server: Callable[..., RunningServer],
) -> None:
    """Nothing can answer a question asked outside an agent's run: the call ends at once, naming it."""
    server = MCPServer(server_name="stateful", server_type="streamable_http", server_url=mcp_server("stateful").url)

    with pytest.raises(MCPElicitationRequired) as raised:
        asyncio.run(client.call_tool(client.endpoint_for(server), "confirm_order", {"item": "pizza"}))

    assert 'asked for input while calling confirm_order (elicitation: "Order pizza?")' in str(raised.value.detail)
    assert raised.value.requests[0]["requested_schema"]["properties"]["confirm"]["type"] == "boolean"
