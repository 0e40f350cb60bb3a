"""Headless Chromium against the live chat server (pytest plugin, see tests/conftest.py): the
``browser``, ``page`` and ``anonymous_page`` fixtures, axe-core's accessibility check, and the
stand-in that replaces every browser test by one failing line when Chromium is missing. For a module
with a server of its own: ``demo_tab`` (a logged-in tab) and ``screenshots`` (at desktop and phone sizes)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.conf import settings
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.live_chat import DEMO_EMAIL, DEMO_PASSWORD, ChatServer
from tests.support.stand_in import stand_in_for

if TYPE_CHECKING:
    from collections.abc import Iterator

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()


def serious_accessibility_violations(page: Page) -> list[str]:
    """What axe-core finds of serious or critical impact on the page once its transitions have settled.

    A control fading in (``opacity`` transitions of the message actions) has no contrast yet.
    """
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")
    page.evaluate(AXE)  # evaluated through the debugger protocol: not an inline script under the CSP
    violations = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes']][:3]}"
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]


SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
CHROMIUM = os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
CHROMIUM_MISSING = (
    "Chromium is missing at {path}, so the {count} browser tests cannot run: "
    "install it (apt-get install chromium) or point CHROMIUM_PATH at a Chromium binary."
)


def chromium_installed() -> bool:
    return os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without Chromium, the browser tests are replaced by one failing check (a broken setup fails, never skips)."""
    browser_tests = [item for item in items if item.get_closest_marker("browser")]
    if not browser_tests or chromium_installed():
        return
    stand_in_for(
        config,
        items,
        browser_tests,
        name="chromium_is_installed",
        check="Chromium is installed",
        message=CHROMIUM_MISSING.format(path=CHROMIUM, count=len(browser_tests)),
        skip=False,
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Remember each phase's report on the test, so fixtures can tell a failed test at teardown."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Chromium for one test module: sync Playwright keeps an event loop running in this thread,
    which async tests of later modules could not start theirs beside."""
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def log_in_as_demo(page: Page, url: str) -> None:
    """Log the demo user in through the login form of the server at ``url``."""
    page.goto(f"{url}/accounts/login/")
    page.get_by_label("Email").fill(DEMO_EMAIL)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{url}/")


@contextlib.contextmanager
def demo_tab(browser: Browser, url: str, *, timeout_ms: float) -> Iterator[Page]:
    """A desktop-sized tab of the demo user, logged in on the server at ``url``; at the end, no JavaScript
    error may have happened on its pages."""
    context = browser.new_context(base_url=url, viewport=SIZES["desktop"])
    context.set_default_timeout(timeout_ms)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    log_in_as_demo(tab, url)
    yield tab
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def screenshots(page: Page, folder: str | None, name: str) -> None:
    """Screenshots of the page at each of ``SIZES`` into ``folder`` (none when it is not set)."""
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    for size, viewport in SIZES.items():
        page.set_viewport_size(viewport)
        page.screenshot(
            path=Path(folder) / f"{name}-{size}-{viewport['width']}x{viewport['height']}.png", full_page=True
        )
    page.set_viewport_size(SIZES["desktop"])


@pytest.fixture(scope="module")
def demo_login_state(browser: Browser, chat_server: ChatServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A logged-in demo user's cookies, so each test's browser context starts logged in."""
    context = browser.new_context()
    page = context.new_page()
    log_in_as_demo(page, chat_server.url)
    path = tmp_path_factory.mktemp("browser") / "demo-login.json"
    context.storage_state(path=path)
    context.close()
    return path


def _browser_page(
    request: pytest.FixtureRequest, browser: Browser, chat_server: ChatServer, storage_state: Path | None
) -> Iterator[Page]:
    context = browser.new_context(
        base_url=chat_server.url, storage_state=storage_state, viewport={"width": 1100, "height": 900}
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors  # type: ignore[attr-defined]
    yield page
    failed = getattr(request.node, "report_call", None)
    if failed is not None and failed.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"{request.node.name}.png", full_page=True)
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.fixture
def page(
    request: pytest.FixtureRequest, browser: Browser, chat_server: ChatServer, demo_login_state: Path
) -> Iterator[Page]:
    """A browser tab of the demo user (logged in); a screenshot lands in test-artifacts/ if the test fails."""
    yield from _browser_page(request, browser, chat_server, demo_login_state)


@pytest.fixture
def anonymous_page(request: pytest.FixtureRequest, browser: Browser, chat_server: ChatServer) -> Iterator[Page]:
    yield from _browser_page(request, browser, chat_server, None)
