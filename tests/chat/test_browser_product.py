"""The chat as a product in headless Chromium: its content security policy, layout, keyboard and accessibility."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import serious_accessibility_violations
from tests.support.chat_page import new_chat, send, wait_idle
from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(180)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

THIRTY_TURNS = (
    "from agents.models import Agent, Message; a = Agent.objects.get(pk='AGENT_PK'); "
    "Message.objects.bulk_create([m for s in range(30) for m in ("
    "Message(organization_id=a.organization_id, agent=a, seq=2 + 2 * s, role='user', "
    "content=[{'type': 'text', 'text': f'question {s}'}]), "
    "Message(organization_id=a.organization_id, agent=a, seq=3 + 2 * s, role='assistant', "
    "content=[{'type': 'reasoning', 'text': 'thinking', 'signature': ''}, "
    "{'type': 'text', 'text': f'answer {s}: see [docs](https://example.com/{s})\\n\\n```\\ncode {s}\\n```'}]))])"
)

LISTEN_FOR_CSP = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
});
"""


def csp_violations(page: Page) -> list[str]:
    return page.evaluate("() => window.cspViolations")


def test_chatting_with_an_approval_reports_no_content_security_policy_violation(page: Page, chat_server: ChatServer):
    page.context.add_init_script(LISTEN_FOR_CSP)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    new_chat(page, chat_server, "csp")

    send(
        page,
        "Some **markdown**, a [link](https://example.com) and code:\n```\nprint(1)\n```\n\n"
        "| a | b |\n|--:|--|\n| 1 | 2 |",
    )
    wait_idle(page)
    page.get_by_role("button", name="Copy code").last.click()
    send(page, "call get_secret_code with input_text=hello")
    page.locator(".approval-controls").first.get_by_role("button", name="Approve", exact=True).click()
    wait_idle(page)

    expect(page.locator(".tool-card").last.locator(".decision-line")).to_contain_text("Approved by")
    assert csp_violations(page) == []
    assert not [text for text in console if "Content Security Policy" in text]


ADMIN = (
    "from accounts.models import User; "
    "User.objects.filter(email='csp-admin@example.com').exists() or "
    "User.objects.create_superuser('csp-admin@example.com', 'csp-admin-password')"
)


def test_the_admin_and_the_api_docs_render_under_the_policy(anonymous_page: Page, chat_server: ChatServer):
    page = anonymous_page
    page.context.add_init_script(LISTEN_FOR_CSP)
    chat_server.server.manage("shell", "-c", ADMIN)

    page.goto(f"{chat_server.url}/admin/login/")
    page.get_by_label("Email").fill("csp-admin@example.com")
    page.get_by_label("Password").fill("csp-admin-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
    assert csp_violations(page) == []
    page.goto(f"{chat_server.url}/admin/agents/agent/")
    expect(page.locator("#result_list")).to_be_visible()
    assert csp_violations(page) == []
    page.goto(f"{chat_server.url}/v1/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Agent server API")
    assert csp_violations(page) == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_header_is_one_line_and_send_sits_beside_the_box_at_the_bottom(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    new_chat(page, chat_server, "layout", viewport=viewport)

    header = page.locator(".site-header").bounding_box()
    box = page.locator("#message").bounding_box()
    send_button = page.get_by_role("button", name="Send").bounding_box()
    assert header is not None and box is not None and send_button is not None
    assert header["height"] < 64
    assert send_button["x"] >= box["x"] + box["width"]  # beside, not below
    assert send_button["y"] < box["y"] + box["height"]
    assert viewport["height"] - (box["y"] + box["height"]) < 48  # pinned to the bottom
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
    if viewport is PHONE:
        expect(page.get_by_role("link", name="Tools")).to_be_hidden()
        page.get_by_role("button", name="Menu").click()
        expect(page.get_by_role("link", name="Tools")).to_be_visible()
        page.keyboard.press("Escape")
        expect(page.get_by_role("link", name="Tools")).to_be_hidden()


def test_a_notice_is_a_toast_that_leaves_the_composer_where_it_is(page: Page, chat_server: ChatServer):
    page.set_viewport_size(PHONE)
    agent_id = chat_server.new_agent("toast")
    page.goto(f"{chat_server.url}/agents/{agent_id}/edit/")
    page.get_by_role("button", name=re.compile("^Save")).click()
    page.wait_for_url(f"{chat_server.url}/agents/{agent_id}/")
    expect(page.locator("#connection")).to_have_text("Live")
    toast = page.locator(".toasts .message").first
    composer_with_toast = page.locator("#message").bounding_box()

    expect(toast).to_be_visible()
    toast.get_by_role("button", name="Dismiss").click()
    expect(toast).to_be_hidden()
    assert page.locator("#message").bounding_box() == composer_with_toast


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_box_is_focused_on_open_and_a_tab_away_from_the_conversation_after_30_turns(
    page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    new_chat(page, chat_server, "keyboard", viewport=viewport, history=THIRTY_TURNS)
    expect(page.locator("article.role-assistant details.reasoning")).to_have_count(15)  # the last page of rows

    assert page.evaluate("() => document.activeElement.id") == "message"
    page.locator("#transcript").focus()
    for _ in range(3):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == "message":
            break
    assert page.evaluate("() => document.activeElement.id") == "message"

    page.locator("#transcript").focus()
    page.keyboard.press("ArrowUp")  # into the conversation's own controls, from the bottom
    focused = page.evaluate("() => [document.activeElement.tagName, document.activeElement.tabIndex]")
    assert focused[0] in ("A", "BUTTON", "SUMMARY") and focused[1] == -1
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_axe_finds_nothing_serious_on_the_login_agents_chat_and_tools_pages(
    page: Page, anonymous_page: Page, chat_server: ChatServer, viewport: dict[str, int]
):
    anonymous_page.set_viewport_size(viewport)
    anonymous_page.goto(f"{chat_server.url}/accounts/login/")
    assert serious_accessibility_violations(anonymous_page) == []

    page.set_viewport_size(viewport)
    page.goto(f"{chat_server.url}/")
    assert serious_accessibility_violations(page) == []
    page.goto(f"{chat_server.url}/tools/")
    assert serious_accessibility_violations(page) == []
    new_chat(page, chat_server, "axe")
    send(page, "Some **markdown** with code:\n```\nprint(1)\n```\n\nand call get_secret_code with input_text=hello")
    expect(page.locator(".approval-controls")).to_have_count(1)
    wait_idle(page)
    assert serious_accessibility_violations(page) == []


def test_a_brand_new_organization_sees_an_approval_from_its_starter_agent_at_once(
    anonymous_page: Page, chat_server: ChatServer
):
    page = anonymous_page
    chat_server.sign_up(page, email="newcomer@example.com", name="Newcomer", organization="Newcomer Inc")

    page.get_by_role("link", name="Chat with Starter agent").click()
    expect(page.locator("#connection")).to_have_text("Live")
    page.get_by_role("button", name="call get_secret_code with input_text='hello world'", exact=True).click()
    page.get_by_role("textbox", name=re.compile("^Message to")).press("Enter")

    expect(page.locator(".tool-card.approval-pending .tool-name")).to_have_text("get_secret_code")
    expect(page.get_by_role("button", name="Approve", exact=True)).to_be_focused()
