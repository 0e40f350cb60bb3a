"""fetch_webpage through DefaultToolRunner, against a real HTTP server on 127.0.0.1.

The server is on loopback, which the egress guard refuses: tests that fetch from it
allow ``127.0.0.1`` (the address, so ``127.0.0.2`` and ``localhost``'s other names stay
refused). Tests aimed at private or metadata addresses never reach the network: a
connection attempt fails the test before any packet is sent.
"""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING

import httpx
import pytest
from asgiref.sync import async_to_sync

from tests.tools.helpers import NO_CONTEXT
from tests.tools.web_fakes import ARTICLE, FakeWeb, fake_web
from tools.base import ToolSpec
from tools.builtins import default_registry
from tools.runtime import DefaultToolRunner

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tools.base import ToolOutcome

REFUSED = (
    "is a private, loopback or link-local address; the server operator can allow it (WEB_FETCH_ALLOWED_PRIVATE_HOSTS)."
)


@pytest.fixture
def web() -> Iterator[FakeWeb]:
    with fake_web() as server:
        yield server


@pytest.fixture
def allow_loopback(settings) -> None:
    settings.WEB_FETCH_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]


@pytest.fixture
def no_connections(monkeypatch) -> None:
    """Any connection attempt fails the test (the guard must refuse before connecting)."""

    async def refuse(self, request):
        raise AssertionError(f"fetch_webpage tried to connect to {request.url}")

    monkeypatch.setattr(httpx.AsyncHTTPTransport, "handle_async_request", refuse)


def fetch(url: str) -> ToolOutcome:
    builtin = default_registry().get("fetch_webpage")
    assert builtin is not None
    spec = ToolSpec(name="fetch_webpage", kind="builtin", json_schema=builtin.json_schema)
    return async_to_sync(DefaultToolRunner().run)(spec, json.dumps({"url": url}), NO_CONTEXT)


def test_it_has_lettas_name_type_and_one_url_parameter():
    builtin = default_registry().get("fetch_webpage")

    assert builtin is not None and builtin.available
    assert builtin.tool_type == "letta_builtin"
    assert builtin.json_schema["parameters"] == {
        "type": "object",
        "properties": {"url": {"type": "string", "description": "The URL of the webpage to fetch and convert"}},
        "required": ["url"],
    }


# --- what comes back -------------------------------------------------------------------------------


def test_it_turns_a_page_into_markdown_without_its_navigation(web, allow_loopback, settings):
    outcome = fetch(web.page("/tides", ARTICLE))

    assert outcome.status == "success", outcome.tool_return
    text = outcome.tool_return
    assert text.startswith("# How tides work")
    assert "## Spring and neap tides" in text
    assert "**two high tides**" in text
    assert "[long explanation](https://example.org/tides)" in text
    assert "- Spring tides come with a full or new Moon." in text
    assert "About us" not in text and "Copyright" not in text
    [request] = web.requests
    assert request.headers["user-agent"] == settings.WEB_FETCH_USER_AGENT
    assert request.headers["host"] == f"127.0.0.1:{web.port}"


def test_a_text_page_comes_back_as_it_is(web, allow_loopback):
    plain = fetch(
        web.page("/notes.txt", "Tides: twice a day.\nCafé opens at 9.".encode("latin-1"), "text/plain; charset=latin-1")
    )
    data = fetch(web.page("/data.json", b'{"high": "06:12"}', "application/json"))

    assert (plain.status, plain.tool_return) == ("success", "Tides: twice a day.\nCafé opens at 9.")
    assert (data.status, data.tool_return) == ("success", '{"high": "06:12"}')


def test_html_without_a_content_type_is_recognised_by_its_first_bytes(web, allow_loopback):
    outcome = fetch(web.page("/bare", ARTICLE, content_type=None))

    assert outcome.status == "success"
    assert outcome.tool_return.startswith("# How tides work")


def test_binary_content_is_a_clear_error(web, allow_loopback):
    url = web.page("/chart.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png")

    outcome = fetch(url)

    assert outcome.status == "error"
    assert outcome.tool_return == (
        f"fetch_webpage cannot read image/png content ({url}): only HTML and text pages are supported."
    )


def test_an_http_error_status_is_an_error_result(web, allow_loopback):
    url = web.url("/missing")

    outcome = fetch(url)

    assert (outcome.status, outcome.tool_return) == (
        "error",
        f"Error fetching webpage: {url} answered HTTP 404 Not Found.",
    )


def test_a_redirect_to_an_allowed_page_is_followed(web, allow_loopback):
    web.page("/tides", ARTICLE)

    outcome = fetch(web.redirect("/old", "/tides", status=301))

    assert outcome.status == "success"
    assert outcome.tool_return.startswith("# How tides work")
    assert [request.path for request in web.requests] == ["/old", "/tides"]


# --- where it may connect ---------------------------------------------------------------------------


def test_lettas_text_refuses_file_urls_and_other_schemes():
    for scheme, url in (("file", "file:///etc/passwd"), ("ftp", "ftp://example.com/x"), ("", "example.com/page")):
        outcome = fetch(url)
        assert outcome.status == "error"
        assert outcome.tool_return == (
            f"Invalid URL scheme '{scheme}'. Only 'http' and 'https' URLs are supported. "
            "Local file paths (file://) and other protocols cannot be fetched."
        )


def test_loopback_is_refused_without_the_allowlist(web):
    for host in ("127.0.0.1", "localhost"):
        url = web.page("/tides", ARTICLE).replace("127.0.0.1", host)
        outcome = fetch(url)
        assert outcome.status == "error"
        assert outcome.tool_return == f"Refused to fetch {url}: {host} {REFUSED}"
    assert web.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://10.0.0.1/admin",
        "http://192.168.1.1/",
        "http://172.16.0.5:8080/",
        "http://100.64.0.1/",
        "http://[::1]:8000/",
        "http://[fd00::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://0.0.0.0:8000/",
    ],
)
def test_private_loopback_and_metadata_addresses_are_refused_before_connecting(no_connections, url):
    outcome = fetch(url)

    assert outcome.status == "error"
    assert outcome.tool_return.startswith(f"Refused to fetch {url}: ")
    assert outcome.tool_return.endswith(REFUSED)


def test_the_allowlist_names_hosts_addresses_or_networks(web, settings):
    url = web.page("/tides", ARTICLE)

    for entry in ("127.0.0.1", "127.0.0.0/8", "localhost"):
        settings.WEB_FETCH_ALLOWED_PRIVATE_HOSTS = [entry]
        host = "localhost" if entry == "localhost" else "127.0.0.1"
        outcome = fetch(url.replace("127.0.0.1", host))
        assert outcome.status == "success", (entry, outcome.tool_return)


def test_a_redirect_to_a_private_address_is_refused(web, allow_loopback):
    target = web.page("/tides", ARTICLE).replace("127.0.0.1", "127.0.0.2")
    start = web.redirect("/hop", target)

    outcome = fetch(start)

    assert outcome.status == "error"
    assert outcome.tool_return == f"Refused to fetch {target} (a redirect from {start}): 127.0.0.2 {REFUSED}"
    assert [request.path for request in web.requests] == ["/hop"]


def test_a_redirect_to_a_metadata_address_or_a_file_is_refused(web, allow_loopback, monkeypatch):
    metadata = web.redirect("/cloud", "http://169.254.169.254/latest/meta-data/")
    local_file = web.redirect("/file", "file:///etc/passwd")

    assert fetch(metadata).tool_return.endswith(f"169.254.169.254 {REFUSED}")
    assert fetch(local_file).tool_return.startswith("Invalid URL scheme 'file'.")


def test_too_many_redirects_stop(web, allow_loopback, settings):
    settings.WEB_FETCH_MAX_REDIRECTS = 2
    url = web.redirect("/loop", "/loop")

    outcome = fetch(url)

    assert outcome.tool_return == "Error fetching webpage: more than 2 redirects (WEB_FETCH_MAX_REDIRECTS)."
    assert len(web.requests) == 3


def test_it_connects_to_the_address_it_checked_so_dns_rebinding_cannot_redirect_it(web, monkeypatch, settings):
    # The first answer for rebind.test is allowed; every later one names another loopback address,
    # which is refused. A second lookup (by the HTTP client) would connect there and fail.
    settings.WEB_FETCH_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host, *args, **kwargs):
        if host != "rebind.test":
            return real(host, *args, **kwargs)
        lookups.append(host)
        address = "127.0.0.1" if len(lookups) == 1 else "127.0.0.2"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, web.port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    url = web.page("/tides", ARTICLE).replace("127.0.0.1", "rebind.test")

    outcome = fetch(url)

    assert outcome.status == "success", outcome.tool_return
    assert lookups == ["rebind.test"]
    [request] = web.requests
    assert request.headers["host"] == f"rebind.test:{web.port}"


def test_a_host_that_does_not_resolve_is_an_error(no_connections, monkeypatch):
    def nothing(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", nothing)

    outcome = fetch("http://no-such-host.invalid/page")

    assert outcome.tool_return == "Error fetching webpage: the host no-such-host.invalid cannot be resolved."


# --- size and time limits ---------------------------------------------------------------------------


def test_a_body_over_the_size_limit_stops_the_fetch(web, allow_loopback, settings):
    settings.WEB_FETCH_MAX_BYTES = 1000
    declared = web.page("/big", b"x" * 5000, "text/plain")
    undeclared = web.trickle("/endless", chunk=b"y" * 400, every=0.0, chunks=50)

    for url in (declared, undeclared):
        outcome = fetch(url)
        assert outcome.status == "error"
        assert outcome.tool_return == f"Error fetching webpage: {url} is larger than 1000 bytes (WEB_FETCH_MAX_BYTES)."


def test_a_server_that_says_nothing_is_stopped_at_the_read_limit(web, allow_loopback, settings):
    settings.WEB_FETCH_READ_TIMEOUT_SECONDS = 0.3
    url = web.silent("/slow", seconds=3)

    outcome = fetch(url)

    assert outcome.status == "error"
    assert outcome.tool_return == (
        f"Error fetching webpage: {url} sent nothing for 0.3 s (WEB_FETCH_READ_TIMEOUT_SECONDS)."
    )
    assert outcome.duration_ms < 2500


def test_a_server_that_trickles_is_stopped_at_the_total_limit(web, allow_loopback, settings):
    settings.WEB_FETCH_READ_TIMEOUT_SECONDS = 5
    settings.WEB_FETCH_TOTAL_TIMEOUT_SECONDS = 0.8
    url = web.trickle("/drip", chunk=b"z", every=0.1, chunks=100)

    outcome = fetch(url)

    assert outcome.status == "error"
    assert outcome.tool_return == (
        f"Error fetching webpage: {url} took longer than 0.8 s in all (WEB_FETCH_TOTAL_TIMEOUT_SECONDS)."
    )
    assert outcome.duration_ms < 4000


def test_the_runner_gives_it_its_own_time_limit_not_the_sandboxs(settings):
    settings.TOOL_SANDBOX_WALL_SECONDS = 1
    settings.WEB_FETCH_TOTAL_TIMEOUT_SECONDS = 30
    builtin = default_registry().get("fetch_webpage")

    assert builtin is not None and builtin.wall_seconds is not None
    assert builtin.wall_seconds() == 45
