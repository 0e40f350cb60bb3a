"""Sessions are reused per server: calls from different event loops share one open session, and an error drops it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from asgiref.sync import async_to_sync

from mcp_servers import client
from mcp_servers.errors import MCPTimeout
from mcp_servers.models import MCPServer

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_django.fixtures import SettingsWrapper

    from tests.mcp_servers.conftest import RunningServer


def endpoint(url: str, transport: str = "streamable_http") -> client.Endpoint:
    return client.endpoint_for(MCPServer(server_name="stateful", server_type=transport, server_url=url))


def session_of(target: client.Endpoint) -> str:
    ok, text = call(target, "which_session", {})
    assert ok, text
    return text


def call(target: client.Endpoint, name: str, arguments: dict[str, str]) -> tuple[bool, str]:
    result = async_to_sync(client.call_tool)(target, name, arguments)
    return not result.is_error, " ".join(getattr(part, "text", "") for part in result.content)


@pytest.mark.parametrize("transport", ["streamable_http", "sse"])
def test_calls_to_one_server_reuse_its_session(mcp_server: Callable[..., RunningServer], transport: str) -> None:
    target = endpoint(mcp_server("stateful", transport).url, transport)

    first, second = session_of(target), session_of(target)
    async_to_sync(client.list_tools)(target)

    assert first == second
    assert session_of(target) == first
    assert client.SESSIONS.is_open(target)


def test_other_headers_get_a_session_of_their_own(mcp_server: Callable[..., RunningServer]) -> None:
    url = mcp_server("stateful").url
    plain = endpoint(url)
    for_agent = client.Endpoint(name="stateful", server_type="streamable_http", url=url, headers={"X-Agent-Id": "a"})

    assert session_of(plain) != session_of(for_agent)


def test_a_timeout_drops_the_session_and_the_next_call_connects_afresh(
    mcp_server: Callable[..., RunningServer], settings: SettingsWrapper
) -> None:
    settings.MCP_CALL_TIMEOUT = 1.0
    target = endpoint(mcp_server("hang").url)
    async_to_sync(client.list_tools)(target)
    assert client.SESSIONS.is_open(target)

    with pytest.raises(MCPTimeout):
        call(target, "wait_forever", {"note": "x"})

    assert not client.SESSIONS.is_open(target)
    assert [tool.name for tool in async_to_sync(client.list_tools)(target)] == ["wait_forever"]
    assert client.SESSIONS.is_open(target)


def test_without_reuse_every_call_has_its_own_session(
    mcp_server: Callable[..., RunningServer], settings: SettingsWrapper
) -> None:
    settings.MCP_REUSE_SESSIONS = False
    target = endpoint(mcp_server("stateful").url)

    assert session_of(target) != session_of(target)
