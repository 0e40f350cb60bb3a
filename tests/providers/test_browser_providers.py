"""The providers page in headless Chromium: add a provider, test it, see its models, read why one is unavailable;
then pick its model in the agent form and switch to it from the chat header.

Screenshots of the pages at 1280x800 and 390x844 land in ``PROVIDER_SCREENSHOTS`` (a folder), when it is set.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.fake_llm.listings import ListingFault
from tests.support.browser import demo_tab
from tests.support.browser import screenshots as take_screenshots
from tests.support.live_chat import start_chat_server
from tests.support.live_server import INPROCESS_ENV

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_chat import ChatServer

pytestmark = [pytest.mark.browser, pytest.mark.live_server, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[ChatServer]:
    env = INPROCESS_ENV | {"DEMO_TOKEN_DELAY": "0", "PROVIDER_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"}
    env["PROVIDER_DISCOVERY_READ_TIMEOUT"] = "2"
    with start_chat_server(tmp_path_factory.mktemp("providers-browser"), extra_env=env) as chat:
        yield chat


@pytest.fixture
def page(browser: Browser, server: ChatServer) -> Iterator[Page]:
    with demo_tab(browser, server.url, timeout_ms=15_000) as tab:
        yield tab


def screenshots(page: Page, name: str) -> None:
    take_screenshots(page, os.environ.get("PROVIDER_SCREENSHOTS"), name)


def add_provider(page: Page, *, name: str, kind: str, base_url: str, action: str = "Add provider") -> None:
    page.goto("/providers/")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Type").select_option(label=kind)
    page.get_by_label("Base URL").fill(base_url)
    page.get_by_role("button", name=action, exact=True).click()


def test_a_person_adds_a_provider_sees_its_models_and_uses_one(
    page: Page, server: ChatServer, fake_llm_server: FakeLLMServer
) -> None:
    fake_llm_server.reset()
    page.goto("/")
    page.get_by_role("link", name="Providers").click()
    expect(page.get_by_role("heading", name="Model providers of", exact=False)).to_be_visible()

    add_provider(page, name="lab-ollama", kind="Ollama", base_url=fake_llm_server.url, action="Test the connection")
    expect(page.locator(".messages")).to_contain_text("The connection works")
    add_provider(page, name="lab-ollama", kind="Ollama", base_url=fake_llm_server.url)
    card = page.locator(".provider-card", has_text="lab-ollama")
    expect(card.locator(".provider-status")).to_have_text("Available")
    expect(card.get_by_role("row", name="lab-ollama/llama3.2:latest")).to_contain_text("131,072 tokens")
    expect(card.get_by_role("row", name="lab-ollama/nomic-embed-text:latest")).to_contain_text("768 dimensions")

    fake_llm_server.fail_listings("openai", ListingFault("401"))
    try:
        add_provider(page, name="lab-vllm", kind="vLLM", base_url=fake_llm_server.base_url_openai)
    finally:
        fake_llm_server.fail_listings("openai", None)
    broken = page.locator(".provider-card", has_text="lab-vllm")
    expect(broken.locator(".provider-status")).to_have_text("Unavailable")
    expect(broken.locator(".provider-reason")).to_contain_text("The provider refused the credentials (HTTP 401).")
    screenshots(page, "providers-page")

    page.goto("/agents/new/")
    picker = page.get_by_label("Model")
    expect(picker.locator('optgroup[label="lab-ollama (this organization)"] option')).to_have_count(1)
    expect(picker.locator('optgroup[label="Demo (offline)"] option')).to_have_count(1)
    picker.select_option("lab-ollama/llama3.2:latest")
    screenshots(page, "agent-form")
    picker.evaluate("select => { select.size = 12; }")  # the options as a list, to see their groups
    screenshots(page, "agent-form-models")

    page.goto(f"/agents/{server.demo_agent_id}/")
    page.get_by_label("Model of", exact=False).select_option("lab-ollama/llama3.2:latest")
    page.get_by_role("button", name="Switch model").click()
    expect(page.locator(".messages")).to_contain_text("now uses lab-ollama/llama3.2:latest")
    expect(page.get_by_label("Model of", exact=False)).to_have_value("lab-ollama/llama3.2:latest")
    page.locator(".messages").get_by_role("button", name="Dismiss").click()
    screenshots(page, "chat-header")
