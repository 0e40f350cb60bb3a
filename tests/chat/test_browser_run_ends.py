"""Every end of a run reaches an open tab without a reload (``agents.runs.state`` announces each).

A REST cancel of a queued run, a REST cancel of a running run, and the sweeper's
verdict on a run whose executor died each turn the tab's "working" state into a
finished run, live.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.chat_page import new_chat, open_chat, send, wait_idle
from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(120)]

QUEUED_RUN = """
from agents.models import Agent, Run
agent = Agent.objects.get(pk="AGENT_PK")
run = Run.objects.create(
    organization_id=agent.organization_id, agent=agent, background=True,
    request={"messages": [{"role": "user", "content": "Waiting for a worker"}]},
)
print(run.public_id)
"""
LIVE_RUN = """
from django.utils import timezone
from agents.models import Agent, Run
agent = Agent.objects.get(pk="AGENT_PK")
now = timezone.now()
run = Run.objects.create(
    organization_id=agent.organization_id, agent=agent, status="running", background=True, started_at=now,
    heartbeat_at=now, request={"messages": [{"role": "user", "content": "Working on it"}]},
)
print(run.public_id)
"""
WORKER_DIES = """
from datetime import timedelta
from django.utils import timezone
from agents.models import Run
Run.objects.filter(pk=Run.parse_public_id("RUN_ID")).update(heartbeat_at=timezone.now() - timedelta(hours=1))
"""


def shell(chat_server: ChatServer, agent_id: str, code: str) -> str:
    """Run ``code`` for the agent in the server's ``manage.py shell``; the last line it printed."""
    printed = chat_server.shell_for_agent(agent_id, code).strip().splitlines()
    return printed[-1] if printed else ""


def test_a_rest_cancel_of_a_queued_run_reaches_the_open_tab(page: Page, chat_server: ChatServer):
    agent_id = chat_server.new_agent("queued cancel")
    run_id = shell(chat_server, agent_id, QUEUED_RUN)
    open_chat(page, chat_server, agent_id)
    expect(page.get_by_role("button", name="Stop")).to_be_visible()

    with chat_server.api() as api:
        assert api.post(f"/v1/runs/{run_id}/cancel").json()["status"] == "cancelled"

    expect(page.locator("#banner")).to_contain_text("Stopped.")
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    wait_idle(page)


def test_a_rest_cancel_of_a_running_run_reaches_the_open_tab(page: Page, chat_server: ChatServer):
    agent_id = new_chat(page, chat_server, "running cancel")
    send(page, "Please repeat all of this back to me slowly: " + "lorem ipsum dolor " * 12)
    expect(page.locator(".row.streaming .bubble.assistant")).to_be_visible()

    with chat_server.api() as api:
        cancelled = api.post(f"/v1/agents/{agent_id}/messages/cancel", json={}).json()

    assert list(cancelled.values()) == ["cancelled"]
    expect(page.locator("#banner")).to_contain_text("Stopped.")
    wait_idle(page)
    with chat_server.api() as api:
        [run_id] = cancelled
        run = api.get(f"/v1/runs/{run_id}").json()
    assert (run["status"], run["stop_reason"]) == ("cancelled", "cancelled")


def test_the_sweepers_verdict_on_a_dead_run_reaches_the_open_tab(page: Page, chat_server: ChatServer):
    agent_id = chat_server.new_agent("swept")
    run_id = shell(chat_server, agent_id, LIVE_RUN)
    open_chat(page, chat_server, agent_id)
    expect(page.get_by_role("button", name="Stop")).to_be_visible()

    chat_server.server.manage("shell", "-c", WORKER_DIES.replace("RUN_ID", run_id))

    expect(page.locator("#banner")).to_contain_text("stopped responding", timeout=20_000)
    expect(page.get_by_role("button", name="Retry")).to_be_visible()
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
