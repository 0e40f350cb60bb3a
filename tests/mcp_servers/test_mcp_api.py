"""Letta's MCP routes against real MCP servers (the ``mcp`` SDK's, over streamable HTTP and SSE)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.db import connection

from mcp_servers.models import MCPServer
from tests.mcp_servers.streams import stream_text
from tools.models import Tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.mcp_servers.conftest import RunningServer

pytestmark = pytest.mark.django_db

TOKEN = "sk-mcp-secret-token-123456"


def create(api: APIClient, name: str, url: str, server_type: str = "streamable_http", **config: Any) -> Any:
    body = {"server_name": name, "config": {"mcp_server_type": server_type, "server_url": url, **config}}
    return api.post("/v1/mcp-servers/", body, format="json")


@pytest.mark.parametrize("transport", ["streamable_http", "sse"])
def test_creating_a_server_registers_its_tools_with_their_annotations(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer], transport: str
) -> None:
    url = mcp_server("tools", transport).url

    response = create(alice_api, "weather", url, transport, auth_header="Authorization", auth_token=f"Bearer {TOKEN}")

    assert response.status_code == 200, response.content
    server = response.json()
    assert server["id"].startswith("mcp_server-")
    assert (server["server_name"], server["mcp_server_type"], server["server_url"]) == ("weather", transport, url)
    assert server["auth_header"] == "Authorization"
    assert TOKEN not in response.content.decode()
    tools = alice_api.get(f"/v1/mcp-servers/{server['id']}/tools").json()
    by_name = {tool["name"]: tool for tool in tools}
    assert set(by_name) == {"lookup_weather", "delete_records", "add_numbers", "fail_always"}
    weather = by_name["lookup_weather"]
    assert weather["tool_type"] == "external_mcp"
    assert weather["tags"] == ["mcp:weather"]
    assert weather["metadata_"]["mcp"]["server_id"] == server["id"]
    assert weather["metadata_"]["mcp"]["annotations"] == {"readOnlyHint": True}
    assert weather["json_schema"]["parameters"]["properties"] == {"city": {"title": "City", "type": "string"}}
    assert weather["default_requires_approval"] is False
    assert by_name["delete_records"]["default_requires_approval"] is True
    assert by_name["delete_records"]["metadata_"]["mcp"]["approval_reason"] == (
        "the server marks this tool as destructive"
    )


def test_the_token_is_encrypted_at_rest_and_masked_in_every_answer(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    url = mcp_server("tools").url
    server_id = create(alice_api, "weather", url, auth_token=TOKEN, custom_headers=None).json()["id"]
    header_id = create(alice_api, "headers", url, custom_headers={"X-Api-Key": TOKEN, "X-Team": "{{ TEAM | core }}"})

    with connection.cursor() as cursor:
        cursor.execute("SELECT secrets FROM mcp_servers_mcpserver")
        raw = cursor.fetchall()
    answers = [
        alice_api.get("/v1/mcp-servers/").content,
        alice_api.get(f"/v1/mcp-servers/{server_id}").content,
        alice_api.get("/v1/tools/mcp/servers").content,
        header_id.content,
    ]
    assert TOKEN not in str(raw)
    assert all(TOKEN.encode() not in answer for answer in answers)
    assert header_id.json()["custom_headers"] == {"X-Api-Key": "****3456", "X-Team": "{{ TEAM | core }}"}


def test_a_tool_runs_through_the_id_keyed_run_route(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    server_id = create(alice_api, "calc", mcp_server("tools").url).json()["id"]
    tools = {tool["name"]: tool["id"] for tool in alice_api.get(f"/v1/mcp-servers/{server_id}/tools").json()}

    ok = alice_api.post(
        f"/v1/mcp-servers/{server_id}/tools/{tools['add_numbers']}/run", {"args": {"a": 2, "b": 3}}, format="json"
    )
    failed = alice_api.post(
        f"/v1/mcp-servers/{server_id}/tools/{tools['fail_always']}/run", {"args": {"reason": "no"}}, format="json"
    )

    assert ok.json() == {
        "status": "success",
        "func_return": "5",
        "agent_state": None,
        "stdout": None,
        "stderr": None,
        "sandbox_config_fingerprint": None,
    }
    assert failed.json()["status"] == "error"


def test_refresh_reports_what_changed(alice_api: APIClient, mcp_server: Callable[..., RunningServer]) -> None:
    server_id = create(alice_api, "calc", mcp_server("tools").url).json()["id"]
    Tool.objects.filter(name="add_numbers").delete()

    response = alice_api.patch(f"/v1/mcp-servers/{server_id}/refresh")

    assert response.status_code == 200
    assert response.json() == {
        "deleted": [],
        "updated": ["lookup_weather", "delete_records", "fail_always"],
        "added": ["add_numbers"],
    }


def test_refresh_of_an_unreachable_server_is_letta_s_404(alice_api: APIClient, cast: Cast) -> None:
    server = MCPServer.objects.create(organization=cast.org_a, server_name="gone", server_url="http://127.0.0.1:9/mcp")

    response = alice_api.patch(f"/v1/mcp-servers/{server.public_id}/refresh")

    assert response.status_code == 404
    assert response.json()["detail"]["code"] == "MCPServerUnavailable"
    assert response.json()["detail"]["message"] == "Could not connect to MCP server gone to resync tools"


def test_deleting_a_server_deletes_its_tools(alice_api: APIClient, mcp_server: Callable[..., RunningServer]) -> None:
    server_id = create(alice_api, "calc", mcp_server("tools").url).json()["id"]

    response = alice_api.delete(f"/v1/mcp-servers/{server_id}")

    assert response.status_code == 204
    assert not MCPServer.objects.exists()
    assert not Tool.objects.filter(kind="mcp").exists()


def test_a_second_server_of_the_same_name_is_a_conflict(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    url = mcp_server("tools").url
    create(alice_api, "calc", url)

    assert create(alice_api, "calc", url).status_code == 409


def test_a_private_address_is_refused_unless_the_operator_allows_it(alice_api: APIClient, settings: Any) -> None:
    settings.MCP_ALLOWED_PRIVATE_HOSTS = []

    response = create(alice_api, "metadata", "http://169.254.169.254/mcp")
    loopback = create(alice_api, "local", "http://127.0.0.1:8000/mcp")

    assert response.status_code == 400
    assert "MCP_ALLOWED_PRIVATE_HOSTS" in response.json()["detail"]
    assert loopback.status_code == 400
    assert not MCPServer.objects.exists()


def test_stdio_is_refused_while_the_operator_has_not_enabled_it(alice_api: APIClient) -> None:
    body = {"server_name": "files", "config": {"mcp_server_type": "stdio", "command": "npx", "args": []}}

    response = alice_api.post("/v1/mcp-servers/", body, format="json")
    legacy = alice_api.put(
        "/v1/tools/mcp/servers", {"server_name": "f", "type": "stdio", "command": "x"}, format="json"
    )

    assert response.status_code == 400
    assert "MCP stdio servers are disabled" in response.json()["detail"]
    assert legacy.status_code == 400
    assert "stdio is not supported in the current environment" in legacy.json()["detail"]


def test_the_legacy_routes_add_list_and_execute_by_name(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    url = mcp_server("tools", "sse").url
    body = {"server_name": "legacy", "type": "sse", "server_url": url}

    added = alice_api.put("/v1/tools/mcp/servers", body, format="json")
    listed = alice_api.get("/v1/tools/mcp/servers")
    live = alice_api.get("/v1/tools/mcp/servers/legacy/tools")
    executed = alice_api.post(
        "/v1/tools/mcp/servers/legacy/tools/lookup_weather/execute", {"args": {"city": "Oslo"}}, format="json"
    )

    assert added.status_code == 200
    assert [config["server_name"] for config in added.json()] == ["legacy"]
    assert listed.json()["legacy"]["type"] == "sse"
    assert listed.json()["legacy"]["server_url"] == url
    weather = next(tool for tool in live.json() if tool["name"] == "lookup_weather")
    assert weather["annotations"] == {"readOnlyHint": True}
    assert weather["inputSchema"]["required"] == ["city"]
    assert weather["health"]["status"] in {"STRICT_COMPLIANT", "NON_STRICT_ONLY"}
    assert executed.json() == {"result": "Sunny in Oslo, 21 C", "success": True}


def test_an_unknown_legacy_server_is_letta_s_not_found(alice_api: APIClient) -> None:
    response = alice_api.get("/v1/tools/mcp/servers/nobody/tools")

    assert response.status_code == 404
    assert response.json() == {
        "detail": {
            "code": "MCPServerNotFoundError",
            "message": "MCP server nobody not found",
            "mcp_server_name": "nobody",
        }
    }


def test_the_connect_stream_reports_the_attempt_and_the_tools(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    server_id = create(alice_api, "calc", mcp_server("tools").url).json()["id"]

    response = alice_api.get(f"/v1/mcp-servers/connect/{server_id}")

    events = stream_text(response).split("\n\n")
    assert events[0] == 'data: {"event": "connection_attempt", "server_name": "calc"}'
    assert events[1].startswith('data: {"event": "success", "tools": [')


def test_the_legacy_test_route_lists_a_servers_tools_without_adding_it(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    body = {"server_name": "probe", "type": "streamable_http", "server_url": mcp_server("tools").url}

    tested = alice_api.post("/v1/tools/mcp/servers/test", body, format="json")
    unreachable = alice_api.post(
        "/v1/tools/mcp/servers/test", {**body, "server_url": "http://127.0.0.1:9/mcp"}, format="json"
    )

    assert tested.status_code == 200
    assert tested.json()["status"] == "success"
    assert {tool["name"] for tool in tested.json()["tools"]} >= {"lookup_weather", "delete_records"}
    assert unreachable.status_code == 502
    assert unreachable.json() == {"detail": "Could not connect to the MCP server probe (ConnectError)."}
    assert not MCPServer.objects.exists()


def test_modifying_a_server_keeps_its_token_unless_a_new_one_is_given(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    url = mcp_server("tools").url
    server_id = create(alice_api, "calc", url, auth_token=TOKEN).json()["id"]

    renamed = alice_api.patch(
        f"/v1/mcp-servers/{server_id}", {"server_name": "maths", "config": {"server_url": url}}, format="json"
    )
    new_token = alice_api.patch(
        f"/v1/mcp-servers/{server_id}",
        {"config": {"server_url": None, "auth_token": "sk-another-token-9999"}},
        format="json",
    )

    assert renamed.json()["server_name"] == "maths"
    assert renamed.json()["auth_token"] == "Bearer ****3456"
    assert new_token.json()["auth_token"] == "Bearer ****9999"
    assert MCPServer.objects.get().token == "sk-another-token-9999"
    assert all(tags == ["mcp:maths"] for tags in Tool.objects.filter(kind="mcp").values_list("tags", flat=True))


def test_the_legacy_connect_stream_lists_the_tools_of_a_config_without_adding_it(
    alice_api: APIClient, mcp_server: Callable[..., RunningServer]
) -> None:
    body = {"server_name": "probe", "type": "streamable_http", "server_url": mcp_server("tools").url}

    response = alice_api.post("/v1/tools/mcp/servers/connect", body, format="json")

    events = stream_text(response).split("\n\n")
    assert events[0] == 'data: {"event": "connection_attempt", "server_name": "probe"}'
    assert events[1].startswith('data: {"event": "success", "tools": [')
    assert "lookup_weather" in events[1]
    assert not MCPServer.objects.exists()
