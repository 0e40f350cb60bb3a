"""Folders in the agent's pages, in a browser: attach a folder in the agent form, see its files open in
the chat's memory panel, and drop a file into the message box: it uploads with progress, is processed,
and the agent is told. Screenshots at 1280x800 and 390x844 go to docs/screenshots/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, Route, expect

from tests.folders.conftest import FIXTURES
from tests.support.browser import serious_accessibility_violations

if TYPE_CHECKING:
    from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(240)]

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
WIDE, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}


def _folder_with_notes(chat_server: ChatServer, name: str) -> str:
    with chat_server.api() as api:
        folder = api.post("/v1/folders/", json={"name": name}).raise_for_status().json()
        files = {"file": ("notes.md", (FIXTURES / "notes.md").read_bytes(), "text/markdown")}
        api.post(f"/v1/folders/{folder['id']}/upload", files=files).raise_for_status()
    return str(folder["id"])


def _drop(page: Page, name: str, data: bytes, mime: str) -> None:
    """Drop a file onto the message box as a person dragging it from their desktop would."""
    transfer = page.evaluate_handle(
        """([name, bytes, mime]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name, { type: mime }));
            return transfer;
        }""",
        [name, list(data), mime],
    )
    page.locator("#message").dispatch_event("dragenter", {"dataTransfer": transfer})
    page.locator("#message").dispatch_event("drop", {"dataTransfer": transfer})


def test_a_folder_attached_in_the_agent_form_shows_its_open_files_in_the_memory_panel(
    page: Page, chat_server: ChatServer
) -> None:
    agent_id = chat_server.new_agent("Plant helper")
    _folder_with_notes(chat_server, "Pump manuals")
    page.set_viewport_size(WIDE)
    page.goto(f"/agents/{agent_id}/edit/")

    folders = page.get_by_role("group", name="Folders")
    folders.get_by_label("Pump manuals").check()
    assert serious_accessibility_violations(page) == []
    folders.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "agent-form-folders-1280x800.png"))
    page.set_viewport_size(PHONE)
    folders.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "agent-form-folders-390x844.png"))
    page.get_by_role("button", name="Save").click()

    page.wait_for_url(f"**/agents/{agent_id}/")
    page.set_viewport_size(WIDE)
    page.reload()  # without the "Saved" toast (base.html's toast list has a role that axe flags as a bad list)
    files = page.locator("#memory-files .memory-file")
    expect(files).to_have_count(1)
    expect(files.first).to_contain_text("Pump manuals/notes.md")
    expect(files.first).to_contain_text("open")
    expect(files.first.locator(".memory-file-range")).to_have_text("All 5 lines")
    assert serious_accessibility_violations(page) == []
    page.screenshot(path=str(SHOTS / "chat-open-files-1280x800.png"))
    page.set_viewport_size(PHONE)
    page.get_by_role("button", name="Memory", exact=True).click()
    page.locator("#memory-files").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "chat-open-files-390x844.png"))

    with chat_server.api() as api:
        file_id = api.get(f"/v1/agents/{agent_id}/files").raise_for_status().json()["files"][0]["file_id"]
        api.patch(f"/v1/agents/{agent_id}/files/{file_id}/close").raise_for_status()
    expect(files.first.locator(".memory-file-range")).to_have_text("Closed: not in the agent's context")


def test_a_file_dropped_into_the_message_box_uploads_with_progress_and_the_agent_is_told(
    page: Page, chat_server: ChatServer
) -> None:
    agent_id = chat_server.new_agent("Drop helper")
    held: list[Route] = []  # the upload waits at the server's door until the screenshot is taken
    uploads = re.compile(rf".*/agents/{agent_id}/files/$")

    for viewport, shot in ((WIDE, "chat-drop-1280x800.png"), (PHONE, "chat-drop-390x844.png")):
        page.set_viewport_size(viewport)
        page.goto(f"/agents/{agent_id}/")
        expect(page.locator("#connection")).to_have_text("Live")
        page.route(uploads, lambda route: held.append(route))
        _drop(page, "guide.pdf", (FIXTURES / "guide.pdf").read_bytes(), "application/pdf")
        chip = page.locator("#drops .drop", has_text="guide.pdf").last
        expect(chip.locator(".drop-status")).to_have_text(re.compile(r"^Uploading"))
        expect(page.locator("#composer")).to_be_in_viewport()
        page.screenshot(path=str(SHOTS / shot))
        assert len(held) == 1
        held.pop().continue_()
        page.unroute(uploads)
        expect(chip.locator(".drop-status")).to_have_text("Ready · the agent was told", timeout=60_000)

    rows = page.locator("#rows")
    expect(rows).to_contain_text("I uploaded the file Drop helper/guide.pdf to the folder Drop helper.")
    page.get_by_role("button", name="Memory", exact=True).click()
    expect(page.locator("#memory-files")).to_contain_text("Drop helper/guide")
    with chat_server.api() as api:
        folders = api.get(f"/v1/agents/{agent_id}/folders").raise_for_status().json()
    assert [folder["name"] for folder in folders] == ["Drop helper"]

    page.set_viewport_size(WIDE)
    _drop(page, "tool.exe", b"MZ", "application/x-msdownload")
    refused = page.locator("#drops .drop", has_text="tool.exe")
    expect(refused).to_have_attribute("data-state", "error")
    expect(refused).to_contain_text("Unsupported file type: application/x-msdownload")
