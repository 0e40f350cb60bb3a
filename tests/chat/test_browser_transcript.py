"""The calm transcript in headless Chromium (issue 12, item 3): names, times, copy, regenerate,
the typing indicator, "Thought for N s", usage behind a toggle and one start marker, on a desktop
and on a phone."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from playwright.sync_api import Page, expect

from tests.chat.test_browser_product import DESKTOP, PHONE
from tests.support.chat_page import new_chat, send, wait_idle
from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(180)]
VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
ANSWER = (
    "I am the demo model, running offline without an API key. You said: “Hello there”. "
    "Try: call roll_dice with num_sides=6."
)

# An earlier exchange: one answer whose reasoning was timed when it streamed, one stored without timing.
TIMED_REASONING = (
    "from agents.models import Agent, Message; a = Agent.objects.get(pk='AGENT_PK'); "
    "Message.objects.bulk_create([Message(organization_id=a.organization_id, agent=a, seq=seq, role=role, "
    "content=content, metadata=metadata) for seq, role, content, metadata in ("
    "(2, 'user', [{'type': 'text', 'text': 'Think hard'}], {}), "
    "(3, 'assistant', [{'type': 'reasoning', 'text': 'Hmm, let me see.', 'signature': ''}, "
    "{'type': 'text', 'text': 'Timed answer'}], {'reasoning_ms': 3200}), "
    "(4, 'user', [{'type': 'text', 'text': 'Again'}], {}), "
    "(5, 'assistant', [{'type': 'reasoning', 'text': 'Old thoughts.', 'signature': ''}, "
    "{'type': 'text', 'text': 'Untimed answer'}], {}))])"
)

# Records, in order, when the typing indicator shows or hides and when the first streamed token lands.
WATCH_TYPING = """() => {
  window.typingLog = [];
  const typing = document.getElementById("typing");
  const seen = () => getComputedStyle(typing).display !== "none" && typing.getBoundingClientRect().height > 0;
  let shown = seen();
  new MutationObserver(() => {
    if (seen() !== shown) { shown = seen(); window.typingLog.push(shown ? "shown" : "hidden"); }
  }).observe(typing, { attributes: true });
  const token = ".row.streaming .reasoning:not([hidden]), .row.streaming .bubble:not([hidden])";
  new MutationObserver(() => {
    if (!window.typingLog.includes("token") && document.querySelector(token)) {
      window.typingLog.push(shown ? "token while shown" : "token");
    }
  }).observe(document.getElementById("rows"), { childList: true, subtree: true, attributes: true });
}"""


def assistant_rows(page: Page):
    return page.locator("article.role-assistant[data-seq]:not([hidden])")


def no_sideways_scroll(page: Page, viewport: dict[str, int]) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]


@VIEWPORTS
def test_each_message_shows_its_author_a_time_with_the_full_date_on_hover_and_copies_its_text(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    page.set_viewport_size(viewport)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    new_chat(page, chat_server, "Named agent")
    send(page, "Hello there")
    wait_idle(page)

    user = page.locator("article.role-user[data-seq]").last
    answer = assistant_rows(page).last
    expect(user.locator(".msg-who")).to_have_text("You")
    expect(answer.locator(".msg-who")).to_have_text("Named agent")
    time = answer.locator("time.msg-time")
    stamp = datetime.fromisoformat(time.get_attribute("datetime").replace("Z", "+00:00"))
    assert abs((datetime.now(stamp.tzinfo) - stamp).total_seconds()) < 600
    assert str(stamp.year) in time.get_attribute("title")
    assert answer.get_attribute("title") == time.get_attribute("title")  # the tooltip anywhere on the message

    copy = answer.locator(".msg-copy")  # its name becomes "Copied" for a moment
    answer.hover()
    expect(copy).to_be_visible()
    expect(copy).to_have_text("Copy")
    assert copy.evaluate("b => b.tabIndex") == -1  # reached with the arrow keys, not one more Tab stop
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == ANSWER
    user.hover()
    user.locator(".msg-copy").click()
    assert page.evaluate("() => navigator.clipboard.readText()") == "Hello there"
    assert no_sideways_scroll(page, viewport)


@VIEWPORTS
def test_regenerate_answers_the_last_message_again_in_a_new_run_and_the_earlier_answer_stays(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    agent_id = new_chat(page, chat_server, "regenerate", viewport=viewport)
    send(page, "Hello there")
    wait_idle(page)
    expect(page.get_by_role("button", name="Regenerate")).to_have_count(1)

    page.evaluate(WATCH_TYPING)
    page.get_by_role("button", name="Regenerate").click()
    wait_idle(page)

    expect(assistant_rows(page)).to_have_count(2)
    expect(assistant_rows(page).locator(".bubble.assistant")).to_have_text([ANSWER, ANSWER])
    assert page.evaluate("() => window.typingLog")[:2] == ["shown", "hidden"]
    expect(assistant_rows(page).last.get_by_role("button", name="Regenerate")).to_have_count(1)
    expect(page.get_by_role("button", name="Regenerate")).to_have_count(1)  # only on the last answer
    with chat_server.api() as api:
        runs = api.get("/v1/runs/", params={"agent_id": agent_id}).raise_for_status().json()
    assert len(runs) == 2 and {run["status"] for run in runs} == {"completed"}

    page.reload()
    expect(page.locator("#connection")).to_have_text("Live")
    expect(assistant_rows(page).locator(".bubble.assistant")).to_have_text([ANSWER, ANSWER])
    expect(page.locator(".bubble.user", has_text="Hello there")).to_have_count(2)
    assert no_sideways_scroll(page, viewport)


@VIEWPORTS
def test_the_agent_is_shown_typing_from_the_send_until_its_first_token(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    new_chat(page, chat_server, "typing", viewport=viewport)
    expect(page.locator("#typing")).to_be_hidden()
    page.evaluate(WATCH_TYPING)

    send(page, "Hello there")
    wait_idle(page)

    # Shown at the send, hidden no later than the first token: never a token under a visible indicator.
    assert page.evaluate("() => window.typingLog") == ["shown", "hidden", "token"]
    expect(page.locator("#typing")).to_be_hidden()
    expect(page.locator("#typing")).to_have_attribute("role", "status")
    expect(page.locator("#typing")).to_contain_text("typing is typing…")


@VIEWPORTS
def test_reasoning_is_one_quiet_thought_line_with_its_measured_duration(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    new_chat(page, chat_server, "thinking", viewport=viewport, history=TIMED_REASONING)

    timed, untimed = page.locator("article[data-seq] details.reasoning").all()
    expect(timed.locator("summary")).to_have_text("Thought for 3 s")
    expect(untimed.locator("summary")).to_have_text("Thought")  # no timing stored: no figure made up
    expect(timed.locator(".reasoning-text")).to_be_hidden()
    assert timed.locator("summary").evaluate("s => s.tabIndex") == -1
    timed.locator("summary").click()
    expect(timed.locator(".reasoning-text")).to_have_text("Hmm, let me see.")

    send(page, "Hello there")
    wait_idle(page)
    live = assistant_rows(page).last.locator("details.reasoning summary")
    expect(live).to_have_text(re.compile(r"^Thought for (less than a second|\d+ s)$"))
    assert no_sideways_scroll(page, viewport)


@VIEWPORTS
def test_usage_and_steps_sit_behind_a_small_info_toggle(page: Page, chat_server: ChatServer, viewport: dict[str, int]):
    new_chat(page, chat_server, "usage", viewport=viewport)
    send(page, "Hello there")
    wait_idle(page)

    usage = assistant_rows(page).last.locator(".usage")
    toggle = assistant_rows(page).last.get_by_role("button", name="Usage details")
    expect(usage).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(usage).to_be_visible()
    expect(usage).to_contain_text(re.compile(r"\d+ prompt \+ \d+ completion = \d+ tokens · 1 step"))
    expect(toggle).to_have_attribute("aria-expanded", "true")
    toggle.click()
    expect(usage).to_be_hidden()
    assert no_sideways_scroll(page, viewport)


@VIEWPORTS
def test_a_new_conversation_has_one_start_marker(page: Page, chat_server: ChatServer, viewport: dict[str, int]):
    new_chat(page, chat_server, "start", viewport=viewport)
    markers = page.get_by_text(re.compile("Start of the conversation|Conversation started"))

    expect(markers).to_have_count(1)
    expect(markers).to_be_visible()
    send(page, "Hello there")
    wait_idle(page)
    expect(markers).to_have_count(1)
