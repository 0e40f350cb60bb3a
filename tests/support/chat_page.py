"""What a person does in the chat page, for the browser tests: open an agent's chat, send a
message (``new_chat``: a fresh agent's), wait until nothing is in flight, read the history the page loads."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Page, expect

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

    from tests.support.live_chat import ChatServer


def open_chat(page: Page, chat_server: ChatServer, agent_id: str) -> None:
    page.goto(f"{chat_server.url}/agents/{agent_id}/")
    expect(page.locator("#connection")).to_have_text("Live")


def new_chat(
    page: Page,
    chat_server: ChatServer,
    name: str,
    *,
    viewport: ViewportSize | dict[str, int] | None = None,
    history: str = "",
    **fields: Any,
) -> str:
    """A fresh agent's chat open in the page (an id): at ``viewport``, after ``history`` ran in the
    server's shell (``AGENT_PK`` standing for the agent), with ``fields`` given to ``new_agent``."""
    if viewport is not None:
        page.set_viewport_size(viewport)  # type: ignore[arg-type]
    agent_id = chat_server.new_agent(name, **fields)
    if history:
        chat_server.shell_for_agent(agent_id, history)
    open_chat(page, chat_server, agent_id)
    return agent_id


def send(page: Page, text: str) -> None:
    box = page.get_by_role("textbox", name=re.compile("^Message to"))
    box.fill(text)
    box.press("Enter")


def wait_idle(page: Page) -> None:
    """Nothing in flight: no request unanswered, no run active, the tab in sync with the server."""
    expect(page.locator("#chat")).to_have_attribute("data-busy", "false", timeout=30_000)
    expect(page.locator(".row.streaming")).to_have_count(0)


def history(page: Page, agent_id: str) -> dict[str, Any]:
    return page.request.get(f"/agents/{agent_id}/history/").json()
