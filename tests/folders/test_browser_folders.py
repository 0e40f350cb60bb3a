"""The Folders page in a browser: drop files in, watch them processed, see completed and error states.
Screenshots at 1280x800 and 390x844 go to /tmp/shots-folders/."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.folders.conftest import FIXTURES
from tests.support.browser import serious_accessibility_violations
from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(180)]

SHOTS = Path("/tmp/shots-folders")


def test_uploaded_files_reach_completed_or_error_on_the_folder_page(page: Page, chat_server: ChatServer) -> None:
    SHOTS.mkdir(exist_ok=True)
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{chat_server.url}/folders/")
    page.get_by_label("Name").fill("Plant manuals")
    page.get_by_label("Description").fill("Manuals and notes for the plant's operators.")
    page.get_by_role("button", name="Create folder").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Plant manuals")

    page.set_input_files("#id_file", [str(FIXTURES / name) for name in ("guide.pdf", "handbook.docx", "notes.md")])
    page.get_by_role("button", name="Upload").click()
    cards = page.locator(".file-card")
    expect(cards).to_have_count(3, timeout=30_000)
    for name in ("guide.pdf", "handbook.docx", "notes.md"):
        card = cards.filter(has_text=name)
        expect(card.locator("[data-status]")).to_have_text("completed", timeout=60_000)
    page.set_input_files("#id_file", [str(FIXTURES / "corrupt.pdf")])
    page.get_by_role("button", name="Upload").click()
    broken = page.locator(".file-card", has_text="corrupt.pdf")
    expect(broken.locator("[data-status]")).to_have_text("error", timeout=60_000)
    expect(broken.locator("[data-error]")).to_contain_text("Could not parse corrupt.pdf")
    assert serious_accessibility_violations(page) == []
    assert problems == []

    page.screenshot(path=str(SHOTS / "folder-1280x800.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "folder-390x844.png"), full_page=True)
    cards.filter(has_text="notes.md").get_by_role("link").click()
    expect(page.locator(".file-preview")).to_contain_text("The codename is Marmalade.")
    page.screenshot(path=str(SHOTS / "preview-390x844.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{chat_server.url}/folders/")
    page.screenshot(path=str(SHOTS / "folders-1280x800.png"), full_page=True)
