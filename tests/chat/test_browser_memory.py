"""The memory panel and the archival memory page in headless Chromium, against the live demo server."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.chat_page import new_chat, open_chat, send, wait_idle
from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(120)]

PHONE = {"width": 390, "height": 844}
BLOCKS = [
    {"label": "human", "value": "Name: Alice", "limit": 40},
    {"label": "persona", "value": "A careful archivist."},
    {"label": "rules", "value": "Be brief.", "read_only": True},
]


def memory_block(page: Page, label: str):
    return page.locator(".memory-block").filter(has=page.locator("h3", has_text=re.compile(f"^{label}$")))


def test_a_person_edits_a_block_in_the_panel_and_sees_an_edit_made_elsewhere_arrive_live(
    page: Page, chat_server: ChatServer
):
    agent_id = new_chat(page, chat_server, "panel", tools=(), memory_blocks=BLOCKS)
    human = memory_block(page, "human")
    expect(human.locator(".memory-value")).to_have_text("Name: Alice")
    expect(human.locator(".memory-chars")).to_have_text("11 / 40 chars")
    expect(memory_block(page, "rules").get_by_role("button", name="Edit")).to_be_hidden()
    expect(page.locator("#context-text")).to_contain_text(re.compile(r"\d+ / [\d,]+ tokens"))

    human.get_by_role("button", name="Edit").click()
    human.get_by_role("textbox").fill("x" * 41)
    expect(human.locator(".memory-chars")).to_have_text("41 / 40 chars")
    human.get_by_role("button", name="Save").click()
    expect(human.get_by_role("alert")).to_have_text("Edit failed: Exceeds 40 character limit (requested 41)")
    expect(human.get_by_role("textbox")).to_have_value("x" * 41)  # the draft is kept
    human.get_by_role("textbox").fill("Name: Alice Liddell")
    human.get_by_role("button", name="Save").click()
    expect(human.locator(".memory-status")).to_have_text("Saved")
    expect(human.locator(".memory-value")).to_have_text("Name: Alice Liddell")
    with chat_server.api() as api:
        stored = api.get(f"/v1/agents/{agent_id}/core-memory/blocks/human").raise_for_status().json()
        assert stored["value"] == "Name: Alice Liddell"

        api.patch(f"/v1/agents/{agent_id}/core-memory/blocks/persona", json={"value": "A poet."}).raise_for_status()

    persona = memory_block(page, "persona")
    expect(persona.locator(".memory-value")).to_have_text("A poet.")
    expect(persona.locator(".memory-chars")).to_have_text("7 / 20,000 chars")
    expect(page.locator(".memory-note")).to_have_count(0)  # an API edit has no tool row in the transcript


def test_a_second_tab_sees_the_first_tabs_edit_without_reloading(page: Page, chat_server: ChatServer):
    agent_id = chat_server.new_agent("two tabs", tools=(), memory_blocks=BLOCKS)
    other = page.context.new_page()
    open_chat(page, chat_server, agent_id)
    open_chat(other, chat_server, agent_id)

    human = memory_block(page, "human")
    human.get_by_role("button", name="Edit").click()
    human.get_by_role("textbox").fill("Name: Bob")
    human.get_by_role("button", name="Save").click()

    expect(memory_block(other, "human").locator(".memory-value")).to_have_text("Name: Bob")
    other.close()


def test_the_demo_model_remembers_something_and_the_panel_and_the_transcript_show_it(
    page: Page, chat_server: ChatServer
):
    new_chat(page, chat_server, "rememberer", tools=(), memory_blocks=BLOCKS)
    meter_before = page.locator("#context-text").inner_text()
    panel_fetches: list[str] = []
    page.on("request", lambda request: "/memory/" in request.url and panel_fetches.append(request.url))

    send(page, "call memory_insert with label=human new_str='Likes green tea.'")
    wait_idle(page)

    expect(memory_block(page, "human").locator(".memory-value")).to_have_text("Name: Alice\nLikes green tea.")
    expect(page.locator("article.role-tool .memory-note")).to_have_text("Memory updated: human")
    expect(page.locator("#context-text")).not_to_have_text(meter_before)  # refreshed when the run ended
    assert panel_fetches == []  # the run's end carried the blocks and the meter: no tab asks for them
    page.reload()
    expect(page.locator("#connection")).to_have_text("Live")
    expect(page.locator("article.role-tool .memory-note")).to_have_text("Memory updated: human")
    expect(memory_block(page, "human").locator(".memory-value")).to_have_text("Name: Alice\nLikes green tea.")


def test_on_a_phone_the_panel_is_behind_a_memory_button_and_nothing_scrolls_sideways(
    page: Page, chat_server: ChatServer
):
    new_chat(page, chat_server, "phone panel", viewport=PHONE, tools=(), memory_blocks=BLOCKS)
    panel = page.locator("#memory-panel")
    expect(panel).to_be_hidden()

    page.get_by_role("button", name="Memory", exact=True).click()
    expect(panel).to_be_visible()
    expect(memory_block(page, "human").locator(".memory-value")).to_have_text("Name: Alice")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    page.get_by_role("button", name="Close memory").click()
    expect(panel).to_be_hidden()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


def test_the_archival_page_adds_finds_and_deletes_a_passage(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "archivist", tools=())
    page.get_by_role("link", name="Archival memory").click()
    expect(page.get_by_role("heading", name="Archival memory")).to_be_visible()

    for text, tags in (("The user's cat is called Dinah.", "pets"), ("Tea at four, always.", "habits, tea")):
        page.get_by_label("Text").fill(text)
        page.get_by_label("Tags").fill(tags)
        page.get_by_role("button", name="Add passage").click()
        expect(page.locator(".toasts")).to_contain_text("Added to archival memory.")
    passages = page.locator(".passage")
    expect(passages).to_have_count(2)
    expect(passages.first).to_contain_text("Tea at four, always.")  # newest first
    expect(passages.first.locator(".badge")).to_have_text(["habits", "tea"])

    page.get_by_role("searchbox").fill("cat")
    page.get_by_role("button", name="Search").click()
    expect(passages).to_have_count(1)
    expect(passages.first).to_contain_text("Dinah")

    passages.first.get_by_role("button", name=re.compile("^Delete")).click()
    expect(passages).to_have_count(1)
    expect(passages.first).to_contain_text("Tea at four")
    with chat_server.api() as api:
        stored = api.get(f"/v1/agents/{agent_id}/archival-memory").raise_for_status().json()
    assert [p["text"] for p in stored] == ["Tea at four, always."]
