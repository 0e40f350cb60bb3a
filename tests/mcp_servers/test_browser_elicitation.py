"""An MCP server's question in the chat, in headless Chromium: the card shows the server's message and a form
of the fields it asked for; a bad answer is refused in the card, a good one reaches the server.

Screenshots at 1280x800 and 390x844 land in ``MCP_SCREENSHOTS`` (a folder), when it is set. The chat server
and the tab are the folder conftest's ``server`` and ``page``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, expect

from tests.mcp_servers.conftest import screenshots
from tests.support.browser import serious_accessibility_violations

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.mcp_servers.conftest import RunningServer
    from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def files_server(server: ChatServer, mcp_server: Callable[..., RunningServer]) -> None:
    """The stateful MCP server, registered once as ``files`` in the demo organization."""
    config = {"mcp_server_type": "streamable_http", "server_url": mcp_server("stateful").url}
    with server.api() as api:
        api.post("/v1/mcp-servers/", json={"server_name": "files", "config": config}).raise_for_status()


@pytest.fixture
def agent_id(server: ChatServer, files_server: None) -> str:
    """A fresh agent of the demo organization with the ``files`` server's ``confirm_delete``."""
    return server.new_agent("asking-agent", tools=("confirm_delete",))


def send(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name=re.compile("^Message to"))
    box.fill(text)
    box.press("Enter")


def test_the_person_answers_the_servers_question_in_a_card_and_the_server_gets_the_answer(
    page: Page, agent_id: str
) -> None:
    page.goto(f"/agents/{agent_id}/")
    expect(page.locator("#connection")).to_have_text("Live")
    send(page, "call confirm_delete with path=/srv/old-report")

    card = page.get_by_role("group", name="Answer files's question")
    expect(card).to_be_visible(timeout=30_000)
    expect(card.locator(".elicitation-message")).to_have_text("Delete /srv/old-report?")
    expect(card.locator(".elicitation-asker")).to_have_text(
        "The MCP server “files” asks, while running confirm_delete:"
    )
    expect(page.locator(".tool-status").last).to_have_text("Waiting for your answer")
    confirm = card.get_by_role("checkbox", name=re.compile("^Confirm"))
    reason = card.get_by_role("textbox", name=re.compile("^Reason"))
    expect(confirm).to_be_visible()
    expect(card.get_by_role("button", name="Decline")).to_be_visible()
    expect(card.get_by_role("button", name="Cancel")).to_be_visible()
    assert serious_accessibility_violations(page) == []
    screenshots(page, "chat-elicitation")

    confirm.check()
    card.get_by_role("button", name="Submit").click()
    error = page.locator(".approval-error")
    expect(error).to_contain_text("reason", timeout=20_000)
    expect(card).to_be_visible()

    reason.fill("superseded")
    card.get_by_role("button", name="Submit").click()
    expect(page.locator("#chat")).to_contain_text(
        "accept: confirm=True reason='superseded' path=/srv/old-report", timeout=30_000
    )
    expect(page.get_by_role("group", name="Answer files's question")).to_have_count(0)


def test_the_question_is_answered_from_the_approvals_inbox_too(page: Page, agent_id: str) -> None:
    page.goto(f"/agents/{agent_id}/")
    expect(page.locator("#connection")).to_have_text("Live")
    send(page, "call confirm_delete with path=/srv/inbox")
    expect(page.get_by_role("group", name="Answer files's question")).to_be_visible(timeout=30_000)

    page.goto("/approvals/")
    item = page.locator(".inbox-item").filter(has_text="Delete /srv/inbox?")
    expect(item).to_be_visible(timeout=20_000)
    item.get_by_role("textbox", name=re.compile("^Reason")).fill("from the inbox")
    item.get_by_role("button", name="Decline").click()
    expect(item).to_have_count(0, timeout=20_000)

    page.goto(f"/agents/{agent_id}/")
    expect(page.locator("#chat")).to_contain_text("decline: nothing deleted at /srv/inbox", timeout=30_000)
