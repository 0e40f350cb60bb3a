"""A compaction in the chat: a quiet marker where it happened, the summary one click away,
and every earlier message still in the transcript."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.chat_page import open_chat
from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(120)]


def test_a_summarized_conversation_shows_the_marker_and_keeps_every_message(page: Page, chat_server: ChatServer):
    agent_id = chat_server.new_agent("compacted")
    with chat_server.api() as api:
        for turn in range(6):
            api.post(
                f"/v1/agents/{agent_id}/messages", json={"input": f"Fact {turn}: owls are birds."}
            ).raise_for_status()
        answer = api.post(f"/v1/agents/{agent_id}/summarize", json={}).raise_for_status().json()
    assert answer["num_messages_after"] < answer["num_messages_before"]

    open_chat(page, chat_server, agent_id)

    marker = page.locator("details.summary")
    expect(marker).to_have_count(1)
    expect(marker.locator("summary")).to_have_text("Earlier messages were summarized")
    marker.locator("summary").click()
    expect(marker.locator(".summary-text")).to_have_text(answer["summary"])
    for turn in range(6):
        expect(page.locator(".bubble.user", has_text=f"Fact {turn}: owls are birds.")).to_have_count(1)
