"""The MCP servers page's "Test and sync tools" button: it says which tools it added, or why it failed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.urls import reverse

from tests.mcp_servers.conftest import add_server
from tools.models import Tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client

    from tests.conftest import Cast
    from tests.mcp_servers.conftest import RunningServer

pytestmark = pytest.mark.django_db


def test_testing_a_server_registers_the_tools_it_lost_and_names_them(
    client: Client, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    server = add_server(cast.org_a, mcp_server("tools").url, "weather")
    Tool.objects.for_org(cast.org_a).filter(name="add_numbers").delete()
    client.force_login(cast.alice)

    page = client.post(reverse("mcp_servers:check", kwargs={"server_id": server.public_id}), follow=True)

    assert "weather: the connection works. New tools: add_numbers." in page.content.decode()


def test_testing_a_server_that_does_not_answer_says_why(client: Client, cast: Cast) -> None:
    server = add_server(cast.org_a, "http://127.0.0.1:9/mcp", "gone")
    client.force_login(cast.alice)

    page = client.post(reverse("mcp_servers:check", kwargs={"server_id": server.public_id}), follow=True)

    content = page.content.decode()
    assert "gone: Could not connect to the MCP server gone" in content
    assert "New tools" not in content
