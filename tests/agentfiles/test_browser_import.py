"""Importing every example agent file in headless Chromium: upload, preview, choose the model, import,
land in the imported agent's chat; a bad file shows its error.

Screenshots at 1280x800 and 390x844 land in ``AGENTFILE_SCREENSHOTS`` (a folder), when it is set.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from tests.agentfiles.test_import_api import FILES, FIXTURES, document

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(240)]

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
SHOTS = os.environ.get("AGENTFILE_SCREENSHOTS")


def shoot(page: Page, name: str) -> None:
    if not SHOTS:
        return
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)  # type: ignore[arg-type]
        page.screenshot(path=Path(SHOTS) / f"{name}-{size}.png", full_page=True)
    page.set_viewport_size(SIZES["desktop"])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", FILES)
def test_every_example_file_imports_through_the_browser(page: Page, name: str) -> None:
    entry = (document(name).get("agents") or [document(name)])[0]
    page.goto("/")
    page.get_by_role("link", name="Import agent").click()
    page.get_by_label("Agent file (.af)").set_input_files(FIXTURES / name)
    page.get_by_label("Model").select_option("demo/echo-1")
    page.get_by_role("button", name="Preview").click()

    preview = page.get_by_role("region", name=f"What {name} will create")
    expect(preview).to_be_visible()
    expect(preview.get_by_role("heading", name=f"{entry['name']}_copy", exact=True)).to_be_visible()
    if name.startswith("v2-308a"):
        shoot(page, "import-preview")
    page.get_by_role("button", name="Import", exact=True).click()

    page.wait_for_url("**/agents/agent-*/")
    expect(page.get_by_text(f"Imported {entry['name']}_copy", exact=False)).to_be_visible()
    if name.startswith("v2-297"):  # the history and the blocks of the file, in the chat page
        expect(page.get_by_text("I'm Loop. I remember. What's on your mind?")).to_be_visible()
        expect(page.locator(".memory-panel, aside").get_by_text("soul", exact=True).first).to_be_visible()
        shoot(page, "imported-chat")


def test_a_bad_file_shows_what_is_wrong(page: Page, tmp_path: Path) -> None:
    bad = tmp_path / "broken.af"
    bad.write_bytes(b'{"agents": [{"id": "agent-0"')
    page.goto("/agents/import/")
    shoot(page, "import-empty")
    page.get_by_label("Agent file (.af)").set_input_files(bad)
    page.get_by_role("button", name="Preview").click()

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Corrupted agent file format")
    shoot(page, "import-error")
