"""The MCP servers page in headless Chromium: add a real MCP server, see its tools and what they do, attach
them to an agent; then the agent calls the read-only tool in the chat, and the destructive one asks first.

Screenshots at 1280x800 and 390x844 land in ``MCP_SCREENSHOTS`` (a folder), when it is set. The chat server
and the tab are the folder conftest's ``server`` and ``page``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.mcp_servers.conftest import screenshots

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.mcp_servers.conftest import RunningServer
    from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(240)]


def add_server(page: Page, name: str, url: str, *, token: str = "") -> None:
    """Add an MCP server on the MCP servers page, as an owner fills the form in."""
    page.goto("/mcp-servers/")
    page.get_by_label("Name").fill(name)
    page.get_by_label("URL").fill(url)
    if token:
        page.get_by_label("Bearer token").fill(token)
    page.get_by_role("button", name="Add and list its tools").click()


def attach(page: Page, row: Locator, agent_name: str) -> None:
    """Attach the tool of a row of a server's tools table to the agent named ``agent_name``."""
    row.get_by_role("combobox").select_option(label=agent_name)
    row.get_by_role("button", name=re.compile("^Attach")).click()
    expect(page.get_by_role("status").filter(has_text="Attached")).to_be_visible(timeout=20_000)


def send(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name=re.compile("^Message to"))
    box.fill(text)
    box.press("Enter")


def test_an_owner_adds_an_mcp_server_attaches_its_tools_and_the_agent_calls_them(
    page: Page, server: ChatServer, mcp_server: Callable[..., RunningServer]
) -> None:
    agent_id = server.new_agent("mcp-agent", tools=())
    add_server(page, "weather", mcp_server("tools").url, token="sk-browser-token-0001")

    expect(page.get_by_role("status").filter(has_text="Added weather")).to_be_visible()
    table = page.get_by_role("table", name="Tools of weather")
    weather = table.get_by_role("row").filter(has_text="lookup_weather")
    destructive = table.get_by_role("row").filter(has_text="delete_records")
    expect(weather).to_contain_text("read-only")
    expect(weather).to_contain_text("Does not ask")
    expect(destructive).to_contain_text("destructive")
    expect(destructive).to_contain_text("Asks: the server marks this tool as destructive")
    assert "sk-browser-token-0001" not in page.content()
    screenshots(page, "mcp-servers")

    for row in (weather, destructive):
        attach(page, row, "mcp-agent")

    page.goto(f"/agents/{agent_id}/")
    expect(page.locator("#connection")).to_have_text("Live")
    send(page, "call lookup_weather with city=Paris")
    expect(page.locator("#chat")).to_contain_text("Sunny in Paris, 21 C", timeout=30_000)
    send(page, "call delete_records with table=users")
    card = page.locator(".approval-controls").first
    expect(card).to_be_visible(timeout=30_000)
    expect(card.locator(".approval-why")).to_have_text("Asks because the server marks this tool as destructive.")
    screenshots(page, "mcp-approval")
    card.get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator("#chat")).to_contain_text("Deleted every record of users", timeout=30_000)


def test_an_owner_connects_an_oauth_server_in_the_browser_and_the_agent_calls_its_tool(
    page: Page, server: ChatServer, mcp_server: Callable[..., RunningServer]
) -> None:
    agent_id = server.new_agent("notes-agent", tools=())
    add_server(page, "notes", mcp_server("oauth").url)
    expect(page.get_by_role("status").filter(has_text="requires authorization (HTTP 401)").first).to_be_visible(
        timeout=20_000
    )

    page.get_by_role("button", name="Connect with OAuth notes").click()
    page.get_by_role("link", name=re.compile("^Continue to 127.0.0.1")).click()
    expect(page.get_by_role("heading", name="Authorize the agent server")).to_be_visible(timeout=20_000)
    page.get_by_role("button", name="Approve").click()

    expect(page.get_by_role("status").filter(has_text="Connected notes with OAuth")).to_be_visible(timeout=20_000)
    card = page.locator(".provider-card").filter(has=page.get_by_role("heading", name=re.compile("^notes ")))
    expect(card).to_contain_text("connected with OAuth", timeout=20_000)
    row = page.get_by_role("table", name="Tools of notes").get_by_role("row").filter(has_text="private_notes")
    screenshots(page, "mcp-oauth-connected")
    attach(page, row, "notes-agent")

    page.goto(f"/agents/{agent_id}/")
    expect(page.locator("#connection")).to_have_text("Live")
    send(page, "call private_notes with topic=launch")
    expect(page.locator("#chat")).to_contain_text("Private notes on launch", timeout=30_000)
