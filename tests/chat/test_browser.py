"""The chat in headless Chromium against a live Daphne running the embedded default and the demo model."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.chat_page import history, new_chat, open_chat, send, wait_idle
from tests.support.live_chat import DEMO_EMAIL, DEMO_PASSWORD, ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(120)]


OLD_MESSAGES = (
    "from agents.models import Agent, Message; a = Agent.objects.get(pk='AGENT_PK'); "
    "Message.objects.bulk_create([Message(organization_id=a.organization_id, agent=a, seq=s, role='user', "
    "content=[{'type': 'text', 'text': f'old message {s}'}]) for s in range(2, 72)])"
)
SHOUT = '''def shout(text: str) -> str:
    """Shout it.

    Args:
        text: What to shout.
    """
    return text.upper()
'''


def last_reply(page: Page):
    return page.locator("article.role-assistant:not(.streaming) .bubble.assistant").last


def approval_call(page: Page, index: int):
    return page.locator(".approval-controls").nth(index)


def test_a_person_logs_in_creates_an_agent_with_an_approval_gated_tool_and_gets_a_streamed_reply(
    anonymous_page: Page, chat_server: ChatServer
):
    page = anonymous_page
    page.goto(f"{chat_server.url}/")
    page.get_by_label("Email").fill(DEMO_EMAIL)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="New agent").click()
    page.get_by_label("Name").fill("Browser agent")
    page.get_by_label("Model").select_option("demo/echo-1")
    page.get_by_role("checkbox", name="get_secret_code").check()
    page.get_by_label("Approval for get_secret_code").select_option("ask")
    page.get_by_role("checkbox", name="roll_dice").check()
    page.get_by_role("button", name="Create agent").click()

    expect(page.get_by_role("heading", name="Browser agent")).to_be_visible()
    expect(page.locator("#connection")).to_have_text("Live")
    expect(page.get_by_role("heading", name="Try the demo model")).to_be_visible()
    page.get_by_role("button", name="Hello! What can you do?").click()
    page.get_by_role("textbox", name=re.compile("^Message to")).press("Enter")

    streaming = page.locator(".row.streaming .bubble.assistant")
    expect(streaming).to_be_visible()
    partial = streaming.inner_text()
    wait_idle(page)
    final = last_reply(page).inner_text()
    assert partial != final and final.startswith(partial.rstrip("▍").strip()[:10])
    assert "I am the demo model" in final
    expect(page.locator("article.role-assistant details.reasoning summary").last).to_have_text(re.compile("^Thought"))
    page.locator("article.role-assistant").last.get_by_role("button", name="Usage details").click()
    expect(page.locator("article.role-assistant .usage").last).to_contain_text("tokens")
    agent_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    with chat_server.api() as api:
        state = api.get(f"/v1/agents/{agent_id}").raise_for_status().json()
    assert {tool["name"] for tool in state["tools"]} == {"get_secret_code", "roll_dice"}
    assert {"tool_name": "get_secret_code", "type": "requires_approval", "prompt_template": None} in state["tool_rules"]


def test_enter_sends_and_shift_enter_adds_a_line(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "keys")
    box = page.get_by_role("textbox", name=re.compile("^Message to"))

    box.type("line one")
    box.press("Shift+Enter")
    box.type("line two")
    box.press("Enter")
    wait_idle(page)

    expect(page.locator("article.role-user .bubble.user").last).to_have_text("line one\nline two")
    assert history(page, agent_id)["rows"][-2]["messages"][0]["content"] == "line one\nline two"


def test_approving_a_call_runs_it_and_the_decision_stays_in_the_history(page: Page, chat_server: ChatServer):
    new_chat(page, chat_server, "approve")

    send(page, "call get_secret_code with input_text=hello")
    expect(page.locator(".tool-card.approval-pending .tool-name")).to_have_text("get_secret_code")
    expect(approval_call(page, 0).locator("pre")).to_have_text('{\n  "input_text": "hello"\n}')
    disabled_while_submitting = approval_call(page, 0).evaluate(
        "card => { const b = card.querySelector('button.approve'); b.click(); return b.disabled; }"
    )
    wait_idle(page)

    assert disabled_while_submitting is True
    card = page.locator(".tool-card").last
    expect(card.locator(".tool-status")).to_have_text("Done")
    expect(card.locator(".tool-result-text")).to_have_text(re.compile(r"^SECRET-[0-9A-F]{8}$"))
    expect(card.locator(".decision-line")).to_contain_text("Approved by")
    expect(last_reply(page)).to_contain_text("the secret code is SECRET-")
    expect(page.locator(".approval-controls")).to_have_count(0)

    page.reload()
    expect(page.locator(".tool-card").last.locator(".decision-line")).to_contain_text("Approved by")
    expect(page.locator(".tool-card").last.locator(".tool-status")).to_have_text("Done")
    expect(page.locator(".approval-controls")).to_have_count(0)


def test_denying_a_call_with_a_reason_tells_the_model_why(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "deny")

    send(page, "call get_secret_code with input_text=hello")
    approval_call(page, 0).get_by_role("button", name="Deny", exact=True).click()
    approval_call(page, 0).get_by_label(re.compile("^Reason")).fill("not during the demo")
    page.get_by_role("button", name="Confirm denial").click()
    wait_idle(page)

    expect(page.locator(".tool-card").last.locator(".tool-status")).to_have_text("Denied")
    expect(page.locator(".tool-card").last.locator(".decision-line")).to_have_text(
        re.compile("^Denied by .*: not during the demo")
    )
    expect(last_reply(page)).to_contain_text("not during the demo")
    rows = history(page, agent_id)["rows"]
    approval = next(m for r in rows for m in r["messages"] if m["message_type"] == "approval_response_message")
    assert approval["approvals"][0]["approve"] is False
    assert approval["approvals"][0]["reason"] == "not during the demo"


def test_providing_a_result_stores_it_as_given_and_shows_it_as_text(page: Page, chat_server: ChatServer):
    new_chat(page, chat_server, "provide")

    send(page, "call get_secret_code with input_text=hello")
    approval_call(page, 0).get_by_role("button", name="Provide result").click()
    approval_call(page, 0).get_by_label("What get_secret_code returns").fill("<b>42</b>")
    page.get_by_role("button", name="Send result").click()
    wait_idle(page)

    expect(page.locator(".tool-card").last.locator(".tool-result-text")).to_have_text("<b>42</b>")
    expect(page.locator(".tool-card").last.locator(".decision-line")).to_contain_text(
        "Result of get_secret_code provided by"
    )
    expect(last_reply(page)).to_contain_text("the secret code is <b>42</b>.")
    assert page.locator("#transcript b").count() == 0


def test_a_parallel_batch_is_answered_together_in_one_submission(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "parallel")

    send(
        page,
        "call roll_dice with num_sides=6 and call get_secret_code with input_text=alpha "
        "and call get_secret_code with input_text=beta",
    )
    expect(page.locator(".approval-controls")).to_have_count(2)
    expect(page.locator(".tool-card", has_text="roll_dice").locator(".tool-status")).to_have_text("Will run")
    approval_call(page, 0).get_by_role("button", name="Approve", exact=True).click()
    approval_call(page, 1).get_by_role("button", name="Deny", exact=True).click()
    page.get_by_role("button", name="Confirm denial").click()
    page.get_by_role("button", name="Submit all").click()
    wait_idle(page)

    statuses = page.locator(".tool-card .tool-status").all_inner_texts()
    assert statuses[-3:] == ["Done", "Done", "Denied"]
    rows = history(page, agent_id)["rows"]
    approvals = [m for r in rows for m in r["messages"] if m["message_type"] == "approval_response_message"]
    tool_returns = [m for r in rows for m in r["messages"] if m["message_type"] == "tool_return_message"]
    assert len(approvals) == 1 and len(approvals[0]["approvals"]) == 2
    assert len(tool_returns) == 1 and len(tool_returns[0]["tool_returns"]) == 3


def test_stop_cancels_the_run_mid_stream(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "stop")

    send(page, "Please repeat all of this back to me slowly: " + "lorem ipsum dolor " * 10)
    expect(page.locator(".row.streaming .bubble.assistant")).to_be_visible()
    page.get_by_role("button", name="Stop").click()
    wait_idle(page)

    expect(page.locator("#banner")).to_contain_text("Stopped.")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    latest = history(page, agent_id)
    assert latest["run"]["status"] == "cancelled"
    assert latest["rows"][-1]["row"]["role"] == "user"  # the cut-off reply was not saved


def test_a_reload_mid_run_loses_nothing_and_doubles_nothing(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "reload")

    send(page, "call roll_dice with num_sides=20 and say it " + "slowly " * 25)
    expect(page.locator(".row.streaming")).to_have_count(1)
    page.reload()
    expect(page.locator("#connection")).to_have_text("Live")
    wait_idle(page)

    stored = history(page, agent_id)
    shown = page.locator("#rows article[data-seq]")
    assert shown.evaluate_all("rows => rows.map(r => Number(r.dataset.seq))") == [
        r["row"]["seq"] for r in stored["rows"]
    ]
    assert stored["run"]["status"] == "completed"
    expect(page.locator(".bubble.user", has_text="call roll_dice")).to_have_count(1)
    final_text = stored["rows"][-1]["messages"][-1]["content"]
    expect(last_reply(page)).to_have_text(final_text)


def test_model_and_tool_text_cannot_inject_html_or_script(page: Page, chat_server: ChatServer):
    new_chat(page, chat_server, "xss")
    markup = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
    attack = f"{markup} **bold** [x](javascript:window.pwned=3)"

    send(page, attack)
    wait_idle(page)

    reply = last_reply(page)
    expect(reply).to_contain_text(markup)
    expect(reply.locator("strong")).to_have_text("bold")
    assert page.evaluate("() => window.pwned") is None
    assert page.locator("#transcript img, #transcript script, #transcript a[href^='javascript']").count() == 0
    expect(page.locator(".bubble.user").last).to_have_text(attack)
    assert page.errors == []  # type: ignore[attr-defined]


def render_markdown(page: Page, samples: list[str]) -> list[str]:
    """Each sample through the chat's Markdown renderer, as HTML."""
    return page.evaluate(
        """async (samples) => {
            const { renderMarkdown } = await import("/static/js/markdown.js");
            return samples.map((text) => {
                const box = document.createElement("div");
                box.append(renderMarkdown(text));
                return box.innerHTML.replace(/\\n/g, "");
            });
        }""",
        samples,
    )


def test_the_markdown_renderer_builds_safe_elements(page: Page, chat_server: ChatServer):
    page.goto(f"{chat_server.url}/")
    rendered = render_markdown(
        page,
        [
            "# Title\n\nSome *em* and **strong** and `code <b>`.",
            "- one\n- two\n\n1. first\n2. second",
            "```python\nprint('<script>')\n```",
            "[safe](https://example.com) [unsafe](javascript:alert(1)) https://example.org/path.",
            "> quoted <i>x</i>",
            "<img src=x onerror=alert(1)> ![pic](https://example.com/a.png) [rel](/agents/) [mail](mailto:a@b.c)",
            "| a | b |\n|--:|:-:|\n| 1 | 2 |",
        ],
    )

    assert (
        rendered[0]
        == "<h3>Title</h3><p>Some <em>em</em> and <strong>strong</strong> and <code>code &lt;b&gt;</code>.</p>"
    )
    assert rendered[1] == "<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>"
    assert rendered[2] == (
        '<div class="code-box"><button type="button" class="copy-code secondary" aria-label="Copy code">Copy</button>'
        "<pre><code class=\"language-python\">print('&lt;script&gt;')</code></pre></div>"
    )
    assert '<a href="https://example.com" target="_blank" rel="noopener noreferrer nofollow">safe</a>' in rendered[3]
    assert "[unsafe](javascript:alert(1))" in rendered[3]
    assert '<a href="https://example.org/path" target="_blank" rel="noopener noreferrer nofollow">' in rendered[3]
    assert rendered[4] == "<blockquote><p>quoted &lt;i&gt;x&lt;/i&gt;</p></blockquote>"
    assert "&lt;img src=x onerror=alert(1)&gt;" in rendered[5]
    assert "<img" not in rendered[5] and "[rel](/agents/)" in rendered[5]
    assert '<a href="mailto:a@b.c" target="_blank" rel="noopener noreferrer nofollow">mail</a>' in rendered[5]
    assert '<th class="align-right">a</th><th class="align-center">b</th>' in rendered[6]
    assert "style" not in rendered[6]


def test_a_streamed_answer_renders_only_its_tail_and_ends_as_the_whole_answer_would(
    page: Page, chat_server: ChatServer
):
    page.goto(f"{chat_server.url}/")
    result = page.evaluate(
        """async (source) => {
            const { renderMarkdown, MarkdownStream } = await import("/static/js/markdown.js");
            const box = document.createElement("div");
            const stream = new MarkdownStream(box);
            const kept = [];
            for (let at = 0; at < source.length; at += 7) {
                stream.source += source.slice(at, at + 7);
                stream.render();
                kept.push(stream.done.firstChild);
            }
            const whole = document.createElement("div");
            whole.append(renderMarkdown(source));
            return {
                same: box.textContent === whole.textContent,
                firstKept: kept.filter(Boolean).every((node) => node === kept.find(Boolean)),
                committed: stream.committed,
                tail: stream.tail.textContent,
                codeBlocks: box.querySelectorAll("pre").length,
            };
        }""",
        "First paragraph.\n\n```js\nconst a = 1;\n\nconst b = 2;\n```\n\nSecond paragraph.\n\nThe last one",
    )

    assert result["same"] is True
    assert result["firstKept"] is True  # rendered once, never replaced
    assert result["codeBlocks"] == 1  # the blank line inside the fence did not split it
    assert result["tail"].strip() == "The last one"


def test_a_code_block_copy_button_copies_the_code_and_links_open_in_a_new_tab(page: Page, chat_server: ChatServer):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    new_chat(page, chat_server, "markdown")

    send(page, "Code:\n```\nprint('copied')\n```\n\nSee [the docs](https://example.com/docs).")
    wait_idle(page)

    reply = last_reply(page)
    reply.get_by_role("button", name="Copy code").click()
    expect(reply.get_by_role("button", name="Copy code")).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == "print('copied')\n"
    link = reply.get_by_role("link", name="the docs")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")


def test_history_pages_upward_when_scrolled_to_the_top(page: Page, chat_server: ChatServer):
    new_chat(page, chat_server, "long history", history=OLD_MESSAGES)
    expect(page.locator(".bubble.user", has_text="old message 71")).to_be_visible()
    expect(page.locator("#rows article[data-seq]")).to_have_count(30)

    for _ in range(5):
        page.locator("#transcript").evaluate("t => { t.scrollTop = 0; }")
        page.wait_for_timeout(300)

    expect(page.locator("#history-start")).to_be_visible()
    expect(page.locator("#rows article[data-seq]")).to_have_count(71)
    expect(page.get_by_text(re.compile("Start of the conversation|Conversation started"))).to_have_count(1)


def test_the_tool_page_previews_the_derived_schema_and_points_at_the_faulty_line(page: Page, chat_server: ChatServer):
    page.goto(f"{chat_server.url}/tools/new/")
    source = page.get_by_label("Python source")

    source.fill(SHOUT)
    expect(page.locator("#schema-output")).to_contain_text('"name": "shout"')
    expect(page.locator("#schema-output")).to_contain_text('"description": "What to shout."')
    source.fill("def shout(text: str) -> str:\n    return text.upper(\n")
    expect(page.locator("#schema-status")).to_contain_text("Line ")
    source.fill('def shout(text: str) -> str:\n    """Shout it."""\n    return text.upper()\n')
    page.get_by_role("button", name="Create tool").click()

    expect(page.get_by_role("row", name=re.compile("shout"))).to_be_visible()
    with chat_server.api() as api:
        assert api.get("/v1/tools/", params={"name": "shout"}).json()[0]["json_schema"]["name"] == "shout"


DEAD_RUN = """
from datetime import timedelta
from django.utils import timezone
from agents.models import Agent, Message, Run
agent = Agent.objects.get(pk="AGENT_PK")
then = timezone.now() - timedelta(hours=1)
run = Run.objects.create(
    organization_id=agent.organization_id, agent=agent, status="running", background=True, started_at=then,
    heartbeat_at=then, request={"messages": [{"role": "user", "content": "Are you still there?", "otid": "dead-1"}]},
)
Message.objects.create(
    organization_id=agent.organization_id, agent=agent, seq=2, role="user", run=run, otid="dead-1",
    content=[{"type": "text", "text": "Are you still there?"}],
)
Agent.objects.filter(pk=agent.pk).update(turn_lock_run_id=run.pk, turn_lock_expires_at=then)
"""


def test_a_run_whose_worker_died_shows_an_error_banner_and_retry_continues_it(page: Page, chat_server: ChatServer):
    agent_id = chat_server.new_agent("dead worker")
    chat_server.shell_for_agent(agent_id, DEAD_RUN)

    open_chat(page, chat_server, agent_id)
    banner = page.locator("#banner")
    expect(banner).to_contain_text("The run failed: The worker running this turn stopped responding")
    page.get_by_role("button", name="Retry").click()
    wait_idle(page)

    expect(banner).to_be_hidden()
    expect(last_reply(page)).to_contain_text("You said: “Are you still there?”")
    expect(page.locator(".bubble.user", has_text="Are you still there?")).to_have_count(1)
    assert history(page, agent_id)["run"]["status"] == "completed"
