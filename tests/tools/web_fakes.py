"""A real HTTP server on 127.0.0.1 for the web tools' tests: pages, and the search APIs' wire.

Each route is a function that answers through the handler; every request is recorded.
``exa_route``, ``tavily_route`` and ``searxng_route`` speak those APIs as their
documentation describes them (paths, authentication headers, bodies, answers).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

ARTICLE = b"""<!doctype html>
<html><head><title>Tide tables</title><meta charset="utf-8"></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About us</a></nav>
<article>
<h1>How tides work</h1>
<p>The Moon pulls the oceans toward it, and the Earth turns underneath that bulge, so most coasts see
<b>two high tides</b> a day. Read the <a href="https://example.org/tides">long explanation</a> for more.</p>
<h2>Spring and neap tides</h2>
<ul><li>Spring tides come with a full or new Moon.</li><li>Neap tides come with the quarter Moons.</li></ul>
<p>Local geography changes the timing and the range of the tide a great deal from one bay to the next.</p>
</article>
<footer>Copyright 2026 The Tide Society</footer>
</body></html>
"""

Route = Callable[["Handler"], None]


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Handler(BaseHTTPRequestHandler):
    server: _Server
    recorded: Recorded

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.recorded = Recorded(
            self.command, parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, body
        )
        self.server.owner.record(self.recorded)
        route = self.server.owner.routes.get(parts.path)
        try:
            if route is None:
                self.answer(404, b"no such page", "text/plain")
            else:
                route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as the limit tests want

    def answer(self, status: int, body: bytes, content_type: str | None, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def answer_json(self, status: int, value: Any) -> None:
        self.answer(status, json.dumps(value).encode(), "application/json")

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FakeWeb


class FakeWeb:
    """The server, on 127.0.0.1 and an ephemeral port, until the context ends."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self._requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def record(self, request: Recorded) -> None:
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def page(self, path: str, body: bytes, content_type: str | None = "text/html; charset=utf-8") -> str:
        self.routes[path] = lambda handler: handler.answer(200, body, content_type)
        return self.url(path)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        self.routes[path] = lambda handler: handler.answer(status, b"", "text/plain", {"Location": location})
        return self.url(path)

    def silent(self, path: str, seconds: float) -> str:
        """Accepts the request, then says nothing for ``seconds``."""

        def route(handler: Handler) -> None:
            time.sleep(seconds)
            handler.answer(200, b"<p>late</p>", "text/html")

        self.routes[path] = route
        return self.url(path)

    def trickle(self, path: str, *, chunk: bytes, every: float, chunks: int) -> str:
        """Sends its headers at once, then ``chunk`` every ``every`` seconds, ``chunks`` times (no length)."""

        def route(handler: Handler) -> None:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/plain")
            handler.end_headers()
            for _ in range(chunks):
                handler.wfile.write(chunk)
                handler.wfile.flush()
                time.sleep(every)

        self.routes[path] = route
        return self.url(path)


@contextlib.contextmanager
def fake_web() -> Iterator[FakeWeb]:
    with FakeWeb() as server:
        yield server


# --- the search APIs ----------------------------------------------------------------------------------


def exa_route(key: str, results: list[dict[str, Any]]) -> Route:
    """``POST /search`` with ``x-api-key`` (Exa's search with contents)."""

    def route(handler: Handler) -> None:
        if handler.headers.get("x-api-key") != key:
            handler.answer_json(401, {"error": "Invalid API key", "requestId": "r-1"})
            return
        body = handler.recorded.json()
        handler.answer_json(
            200,
            {
                "requestId": "b5947044c4b78efa9552a7c89b306d95",
                "resolvedSearchType": "neural",
                "results": results[: body.get("numResults", 10)],
                "costDollars": {"total": 0.005},
            },
        )

    return route


def tavily_route(key: str, results: list[dict[str, Any]]) -> Route:
    """``POST /search`` with ``Authorization: Bearer`` (Tavily's search)."""

    def route(handler: Handler) -> None:
        if handler.headers.get("Authorization") != f"Bearer {key}":
            handler.answer_json(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
            return
        body = handler.recorded.json()
        handler.answer_json(
            200,
            {
                "query": body["query"],
                "answer": None,
                "images": [],
                "results": results[: body.get("max_results", 5)],
                "response_time": 1.09,
                "request_id": "123e4567-e89b-12d3-a456-426614174111",
            },
        )

    return route


def searxng_route(results: list[dict[str, Any]]) -> Route:
    """``GET /search?q=…&format=json`` (a SearXNG instance with the JSON format enabled)."""

    def route(handler: Handler) -> None:
        query = parse_qs(urlsplit(handler.path).query)
        if query.get("format") != ["json"]:
            handler.answer(403, b"Forbidden", "text/html")
            return
        handler.answer_json(
            200,
            {
                "query": query["q"][0],
                "number_of_results": 0,
                "results": results,
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [],
                "unresponsive_engines": [],
            },
        )

    return route
