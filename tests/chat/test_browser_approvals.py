"""Approval cards in the chat and the organization's approvals inbox, in headless Chromium against
a live Daphne (the embedded default, the demo model), at 1280x800 and 390x844 (issue 11)."""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import ARTIFACTS, serious_accessibility_violations
from tests.support.chat_page import history, new_chat, open_chat, send, wait_idle
from tests.support.polling import poll

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator

    from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(180)]

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SIZES = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
# Screenshots of the cards and the inbox for reviews (test-artifacts/ is ignored by git).
SCREENS = ARTIFACTS / "screens" / "approvals"

TWENTY_TURNS = (
    "from agents.models import Agent, Message; a = Agent.objects.get(pk='AGENT_PK'); "
    "Message.objects.bulk_create([m for s in range(20) for m in ("
    "Message(organization_id=a.organization_id, agent=a, seq=2 + 2 * s, role='user', "
    "content=[{'type': 'text', 'text': f'question {s}'}]), "
    "Message(organization_id=a.organization_id, agent=a, seq=3 + 2 * s, role='assistant', "
    "content=[{'type': 'text', 'text': f'answer {s}: ' + 'a fairly long line of text ' * 6}]))])"
)
# The request waited five minutes, and its agent allows one: the sweeper's next pass denies it.
EXPIRE = (
    "import datetime; from django.utils import timezone; from agents.models import Agent, Message; "
    "a = Agent.objects.get(pk='AGENT_PK'); a.approval_expiry_minutes = 1; a.save(); "
    "Message.objects.filter(agent=a).update(created_at=timezone.now() - datetime.timedelta(minutes=5))"
)
SECOND_AGENT = (
    "from accounts.models import Organization; from agents import services; from tools.models import Tool; "
    "org = Organization.objects.get(name='ORG'); tool = Tool.objects.get(organization=org, name='get_secret_code'); "
    "print(services.agent_create(organization=org, name='Second agent', model='demo/echo-1', "
    "tool_ids=[tool.public_id]).public_id)"
)


def screenshot(page: Page, name: str, viewport: dict[str, int]) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENS / f"{name}-{viewport['width']}x{viewport['height']}.png")


def last_reply(page: Page) -> Locator:
    return page.locator("article.role-assistant:not(.streaming) .bubble.assistant").last


def cards(page: Page) -> Locator:
    return page.locator(".approval-controls")


def deny_with_reason(card: Locator, text: str, key: str) -> Locator:
    """Press Deny on the approval card, type ``text`` as the reason, then press ``key``; the reason field."""
    card.get_by_role("button", name="Deny", exact=True).click()
    reason = card.get_by_label(re.compile("^Reason"))
    reason.fill(text)
    reason.press(key)
    return reason


def on_screen(page: Page, locator: Locator) -> bool:
    """Whether the element is inside the window and inside the transcript's visible part (no scrolling needed)."""
    return locator.evaluate(
        """el => {
          const box = el.getBoundingClientRect();
          const view = (el.closest('.transcript') ?? document.documentElement).getBoundingClientRect();
          return box.width > 0 && box.top >= Math.max(0, view.top) && box.bottom <= Math.min(innerHeight, view.bottom)
            && box.left >= 0 && box.right <= innerWidth;
        }"""
    )


def no_horizontal_scroll(page: Page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def approval_items(page: Page, agent_id: str) -> list[dict]:
    rows = history(page, agent_id)["rows"]
    return [
        item
        for row in rows
        for message in row["messages"]
        if message["message_type"] == "approval_response_message"
        for item in message["approvals"]
    ]


# --- the card ------------------------------------------------------------------------------------


@SIZES
def test_after_twenty_earlier_turns_a_new_approval_is_on_screen_and_answered_in_one_click(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    agent_id = new_chat(page, chat_server, "long chat", viewport=viewport, history=TWENTY_TURNS)

    send(page, 'call get_secret_code with input_text="' + "a long text to fold " * 12 + '"')
    card = cards(page).first
    approve = card.get_by_role("button", name="Approve", exact=True)
    deny = card.get_by_role("button", name="Deny", exact=True)
    expect(approve).to_be_focused()
    expect(card.locator(".approval-description")).to_have_text(
        "Return the secret code for a text. A person must approve each call."
    )
    expect(card.locator(".approval-json").first).to_contain_text(re.compile(r"… \(\d+ characters\)"))
    assert on_screen(page, approve) and on_screen(page, deny)
    assert no_horizontal_scroll(page)
    expect(page.locator("#composer-hint")).to_have_text("Answering sends your message after the decision.")
    screenshot(page, "card", viewport)

    approve.click()
    wait_idle(page)

    tool_card = page.locator(".tool-card").last
    expect(tool_card.locator(".tool-status")).to_have_text("Done")
    expect(tool_card.locator(".decision-line")).to_have_text(re.compile(r"^Approved by demo@example\.com just now$"))
    expect(last_reply(page)).to_contain_text("the secret code is SECRET-")
    expect(cards(page)).to_have_count(0)
    assert approval_items(page, agent_id)[0]["approve"] is True


def test_a_pending_card_stays_on_screen_when_the_window_narrows_to_a_phone(page: Page, chat_server: ChatServer):
    new_chat(page, chat_server, "narrowing window", viewport=DESKTOP, history=TWENTY_TURNS)
    send(page, 'call get_secret_code with input_text="turned"')
    approve = cards(page).first.get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_focused()

    page.set_viewport_size(PHONE)

    poll(lambda: on_screen(page, approve), bool, timeout=5)
    assert on_screen(page, cards(page).first.get_by_role("button", name="Deny", exact=True))


def test_a_note_typed_while_an_approval_waits_is_sent_after_the_decision(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "note")
    send(page, "call get_secret_code with input_text=hello")
    approve = cards(page).first.get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_focused()

    page.get_by_role("textbox", name=re.compile("^Message to")).fill("and thanks")
    approve.click()
    wait_idle(page)

    expect(page.locator(".bubble.user").last).to_have_text("and thanks")
    expect(page.get_by_role("textbox", name=re.compile("^Message to"))).to_have_value("")
    kinds = [m["message_type"] for row in history(page, agent_id)["rows"] for m in row["messages"]]
    last_user_message = max(i for i, kind in enumerate(kinds) if kind == "user_message")
    assert kinds.index("approval_response_message") < last_user_message


@SIZES
def test_a_parallel_batch_of_four_is_answered_call_by_call_then_submitted_together(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    agent_id = new_chat(page, chat_server, "batch of four", viewport=viewport)

    send(page, " and ".join(f"call get_secret_code with input_text={word}" for word in ("one", "two", "three", "four")))
    expect(cards(page)).to_have_count(4)
    submit_all = page.get_by_role("button", name="Submit all")
    expect(submit_all).to_be_disabled()
    expect(cards(page).first.get_by_role("button", name="Approve", exact=True)).to_be_focused()
    assert on_screen(page, cards(page).first.get_by_role("button", name="Deny", exact=True))
    assert on_screen(page, submit_all)
    assert no_horizontal_scroll(page)

    page.keyboard.press("a")  # the focused card: approved, focus moves on to the next card
    expect(cards(page).nth(1).get_by_role("button", name="Approve", exact=True)).to_be_focused()
    page.keyboard.press("d")
    reason = cards(page).nth(1).get_by_label(re.compile("^Reason"))
    expect(reason).to_be_focused()
    reason.fill("not this one")
    reason.press("Enter")
    cards(page).nth(2).get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator(".approval-progress")).to_have_text("3 of 4 answered")
    expect(submit_all).to_be_disabled()
    screenshot(page, "batch", viewport)
    cards(page).nth(3).get_by_role("button", name="Approve", exact=True).click()
    expect(submit_all).to_be_enabled()
    expect(submit_all).to_be_focused()
    submit_all.click()
    wait_idle(page)

    assert page.locator(".tool-card .tool-status").all_inner_texts()[-4:] == ["Done", "Denied", "Done", "Done"]
    items = approval_items(page, agent_id)
    assert [item["approve"] for item in items] == [True, False, True, True]
    assert items[1]["reason"] == "not this one"


def test_escape_closes_the_reason_field_without_answering(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "escape")
    send(page, "call get_secret_code with input_text=hello")
    card = cards(page).first
    reason = deny_with_reason(card, "maybe", "Escape")

    expect(reason).to_be_hidden()
    expect(card.get_by_role("button", name="Approve", exact=True)).to_be_focused()
    assert approval_items(page, agent_id) == []


@SIZES
def test_edit_and_approve_runs_the_tool_with_the_arguments_from_the_schema_form(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    agent_id = new_chat(page, chat_server, "edit", viewport=viewport)
    send(page, "call get_secret_code with input_text=hello")

    card = cards(page).first
    card.get_by_role("button", name="Edit").click()
    field = card.get_by_label(re.compile("^input_text"))
    expect(field).to_be_focused()
    expect(field).to_have_value("hello")
    field.fill("edited by a person")
    assert no_horizontal_scroll(page)
    screenshot(page, "edit", viewport)
    card.get_by_role("button", name="Approve with these arguments").click()
    wait_idle(page)

    tool_card = page.locator(".tool-card").last
    expect(tool_card.locator(".tool-status")).to_have_text("Done")
    expect(tool_card.locator(".decision-line")).to_have_text(
        re.compile(r"^Approved by demo@example\.com just now, arguments edited$")
    )
    expect(tool_card.locator(".tool-args")).to_contain_text("edited by a person")
    item = approval_items(page, agent_id)[0]
    assert item["arguments"] == {"input_text": "edited by a person"}
    assert item["original_arguments"] == {"input_text": "hello"}


def test_always_allow_approves_the_call_and_stops_asking_for_that_tool(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "always")
    send(page, "call get_secret_code with input_text=first")
    cards(page).first.get_by_role("button", name="Always allow get_secret_code for this agent").click()
    wait_idle(page)
    expect(page.locator(".tool-card").last.locator(".tool-status")).to_have_text("Done")

    send(page, "call get_secret_code with input_text=second")
    wait_idle(page)

    expect(cards(page)).to_have_count(0)
    expect(page.locator(".tool-card").last.locator(".tool-status")).to_have_text("Done")
    with chat_server.api() as api:
        state = api.get(f"/v1/agents/{agent_id}").raise_for_status().json()
    assert {"tool_name": "get_secret_code", "type": "requires_approval", "prompt_template": None} not in state[
        "tool_rules"
    ]


def test_a_denial_reads_denied_by_its_author_then_the_agents_answer(page: Page, chat_server: ChatServer):
    new_chat(page, chat_server, "denied", viewport=DESKTOP)
    send(page, "call get_secret_code with input_text=hello")

    deny_with_reason(cards(page).first, "not during the demo", "Enter")
    wait_idle(page)

    tool_card = page.locator(".tool-card").last
    expect(tool_card.locator(".tool-status")).to_have_text("Denied")
    expect(tool_card.locator(".decision-line")).to_have_text(
        re.compile(r"^Denied by demo@example\.com: not during the demo · just now$")
    )
    expect(tool_card.locator(".tool-result")).to_be_hidden()
    expect(last_reply(page)).to_contain_text("not during the demo")
    order = page.evaluate(
        """() => {
          const decision = [...document.querySelectorAll('.decision-line')].pop();
          const answer = [...document.querySelectorAll('article.role-assistant .bubble.assistant')].pop();
          return decision.compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING;
        }"""
    )
    assert order, "the agent's answer comes after the decision"
    assert page.locator(".tool-status", has_text="Error").count() == 0
    screenshot(page, "denied", DESKTOP)


def test_an_expired_approval_becomes_a_denial_and_the_agent_answers(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "expiry")
    send(page, "call get_secret_code with input_text=hello")
    expect(cards(page)).to_have_count(1)

    chat_server.shell_for_agent(agent_id, EXPIRE)

    tool_card = page.locator(".tool-card").last
    expect(tool_card.locator(".decision-line")).to_have_text(
        re.compile(r"^Denied automatically: Approval expired after 1 minutes"), timeout=30_000
    )
    wait_idle(page)
    expect(cards(page)).to_have_count(0)
    expect(tool_card.locator(".tool-status")).to_have_text("Denied")
    expect(last_reply(page)).to_contain_text("Approval expired after 1 minutes")


# --- the inbox -----------------------------------------------------------------------------------


def sign_up(page: Page, chat_server: ChatServer, organization: str) -> None:
    chat_server.sign_up(
        page, email=f"{uuid.uuid4().hex[:10]}@example.com", name="Inbox reader", organization=organization
    )
    expect(page.get_by_role("link", name="Chat with Starter agent")).to_be_visible()


def ask_for_approval(page: Page, chat_server: ChatServer, agent_id: str, text: str) -> None:
    open_chat(page, chat_server, agent_id)
    send(page, f'call get_secret_code with input_text="{text}"')
    expect(cards(page)).to_have_count(1)


def badge(page: Page) -> Locator:
    return page.locator("#approvals-badge")


@SIZES
def test_the_inbox_lists_the_organizations_approvals_live_and_its_badge_counts_down(
    anonymous_page: Page, page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    inbox = anonymous_page
    inbox.set_viewport_size(viewport)
    organization = f"Inbox {uuid.uuid4().hex[:6]}"
    sign_up(inbox, chat_server, organization)
    starter = inbox.get_by_role("link", name="Chat with Starter agent").get_attribute("href")
    assert starter is not None
    starter_id = starter.strip("/").split("/")[-1]
    second_id = chat_server.server.manage("shell", "-c", SECOND_AGENT.replace("ORG", organization)).split()[-1]
    inbox.goto(f"{chat_server.url}/approvals/")
    expect(inbox.get_by_text("Nothing is waiting for approval.")).to_be_visible()
    expect(badge(inbox)).to_be_hidden()

    chat = inbox.context.new_page()
    ask_for_approval(chat, chat_server, starter_id, "from the starter")
    expect(inbox.locator(".inbox-item")).to_have_count(1)
    expect(badge(inbox)).to_have_text("1 waiting")
    ask_for_approval(chat, chat_server, second_id, "from the second")
    expect(inbox.locator(".inbox-item")).to_have_count(2)
    expect(badge(inbox)).to_have_text("2 waiting")
    expect(inbox).to_have_title(re.compile(r"^\(2\) Approvals"))
    expect(inbox.locator(".inbox-item h2").first).to_have_text("Second agent")  # newest first
    inbox.reload()
    expect(badge(inbox)).to_have_text("2 waiting")  # rendered by the server too
    expect(inbox.locator(".inbox-item")).to_have_count(2)
    assert no_horizontal_scroll(inbox)
    assert serious_accessibility_violations(inbox) == []
    screenshot(inbox, "inbox", viewport)

    page.goto(f"{chat_server.url}/approvals/")  # another organization's member sees none of them
    expect(page.locator(".inbox-item h2", has_text="Second agent")).to_have_count(0)

    inbox.locator(".inbox-item").first.get_by_role("button", name="Approve", exact=True).click()
    expect(inbox.locator(".inbox-item")).to_have_count(1)
    expect(badge(inbox)).to_have_text("1 waiting")
    expect(inbox).to_have_title(re.compile(r"^\(1\) Approvals"))
    expect(chat.locator(".tool-card").last.locator(".tool-status")).to_have_text(
        "Done"
    )  # answered in the chat's tab too

    item = inbox.locator(".inbox-item").first
    deny_with_reason(item, "from the inbox", "Enter")
    expect(inbox.locator(".inbox-item")).to_have_count(0)
    expect(badge(inbox)).to_be_hidden()
    expect(inbox).to_have_title(re.compile(r"^Approvals"))
    expect(inbox.get_by_text("Nothing is waiting for approval.")).to_be_visible()


def test_axe_finds_nothing_serious_on_a_chat_with_a_pending_batch(
    page: Page, chat_server: ChatServer, browser: Browser
):
    for viewport in (DESKTOP, PHONE):
        new_chat(page, chat_server, "axe approvals", viewport=viewport)
        send(page, "call get_secret_code with input_text=one and call get_secret_code with input_text=two")
        expect(cards(page)).to_have_count(2)
        cards(page).first.get_by_role("button", name="Edit").click()
        cards(page).nth(1).get_by_role("button", name="Deny", exact=True).click()
        assert serious_accessibility_violations(page) == []


# A tab in the background whose person opted in: the page's Notification calls are recorded.
HIDDEN_TAB_WITH_NOTIFICATIONS = """
Object.defineProperty(document, "hidden", { get: () => true });
window.shownNotifications = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.shownNotifications.push({ title, body: options.body }); }
  addEventListener() {}
};
localStorage.setItem("approvals.notify", "on");
"""


def test_an_approval_arriving_while_the_tab_is_hidden_shows_a_desktop_notification_when_opted_in(
    page: Page, chat_server: ChatServer
):
    background = page.context.new_page()
    background.add_init_script(HIDDEN_TAB_WITH_NOTIFICATIONS)
    background.goto(f"{chat_server.url}/tools/")
    expect(background.locator("#approvals-badge")).to_have_attribute(
        "data-live", "true"
    )  # the first state: no notification
    assert background.evaluate("() => window.shownNotifications") == []

    agent_id = chat_server.new_agent("notify")
    ask_for_approval(page, chat_server, agent_id, "ping")

    background.wait_for_function("() => window.shownNotifications.length === 1")
    assert background.evaluate("() => window.shownNotifications") == [
        {"title": "Approval needed", "body": "notify wants to run get_secret_code"}
    ]
