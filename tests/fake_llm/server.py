"""A real HTTP server speaking the Anthropic Messages API and OpenAI chat completions.

Tests point the official SDKs at it. Each model request takes the next scripted
item (a ``Reply`` or a ``Fault``) or, when none is queued, an automatic reply.
Every model request is recorded. It also lists models as each vendor does (OpenAI's and
Anthropic's ``GET /v1/models``, Ollama's ``/api/tags`` and ``/api/show``) and embeds
(``POST /v1/embeddings``), see ``tests.fake_llm.listings``; those requests are recorded apart
(``listing_requests``), and a listing can be made to fail (``fail_listings``). Control
endpoints for a separate process: ``POST /__script__``, ``POST /__reset__``, ``GET /__requests__``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from tests.fake_llm import anthropic_wire, listings, openai_wire
from tests.fake_llm.auto import auto_reply
from tests.fake_llm.exchange import read_anthropic, read_openai
from tests.fake_llm.script import Fault, Reply, items_from_json

if TYPE_CHECKING:
    from tests.fake_llm.exchange import Exchange, Protocol
    from tests.fake_llm.listings import ListingFault, ListingProtocol
    from tests.fake_llm.script import ScriptItem

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
EMBEDDINGS_PATHS = ("/v1/embeddings", "/embeddings")
_BROKEN_JSON = b'{"id": "broken", "content": [{"type": "text", "text": "unfinished'
_TRAILING_FRAMES = 3  # content_block_stop, message_delta, message_stop / finish, usage, [DONE]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def protocol(self) -> Protocol:
        return "anthropic" if self.path == ANTHROPIC_PATH else "openai"

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "headers": self.headers, "body": self.body}


class FakeLLMServer:
    """The fake, on 127.0.0.1 with an ephemeral port unless told otherwise.

    ``base_url_anthropic`` / ``base_url_openai`` are what the SDKs take as ``base_url``.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, record: bool = True) -> None:
        self._lock = threading.Lock()
        self._record_requests = record
        self._queue: deque[ScriptItem] = deque()
        self._requests: list[RecordedRequest] = []
        self._listing_requests: list[RecordedRequest] = []
        self._listings: dict[str, list[dict[str, Any]]] = {}
        self._listing_faults: dict[str, ListingFault] = {}
        self._httpd = _HTTPServer((host, port), _Handler, self)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url_anthropic(self) -> str:
        return self.url

    @property
    def base_url_openai(self) -> str:
        return f"{self.url}/v1"

    def server_env(self, *, openai: bool = False) -> dict[str, str]:
        """A live server's settings that send its Anthropic calls here (and, with ``openai``, its OpenAI calls)."""
        env = {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
        if openai:
            env |= {"OPENAI_BASE_URL": self.base_url_openai, "OPENAI_API_KEY": "sk-test"}
        return env

    def start(self) -> Self:
        self._thread = threading.Thread(target=self.serve_forever, name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.05)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- scripting -----------------------------------------------------------

    def script(self, *items: ScriptItem) -> None:
        """Queue answers for the next model requests, in order, whatever their protocol."""
        with self._lock:
            self._queue.extend(items)

    def reset(self) -> None:
        """Forget queued items, recorded requests, listings set and listing faults."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._listing_requests.clear()
            self._listings.clear()
            self._listing_faults.clear()

    # --- listings ------------------------------------------------------------

    def set_listing(self, protocol: ListingProtocol, models: list[dict[str, Any]]) -> None:
        """What ``protocol``'s model listing answers from now on (``tests.fake_llm.listings`` has the defaults)."""
        with self._lock:
            self._listings[protocol] = list(models)

    def fail_listings(self, protocol: ListingProtocol, fault: ListingFault | None) -> None:
        """Make ``protocol``'s model listings fail that way (``None``: answer again)."""
        with self._lock:
            if fault is None:
                self._listing_faults.pop(protocol, None)
            else:
                self._listing_faults[protocol] = fault

    @property
    def listing_requests(self) -> list[RecordedRequest]:
        """Listing and embedding requests, in order."""
        with self._lock:
            return list(self._listing_requests)

    def _listing(self, protocol: ListingProtocol) -> tuple[list[dict[str, Any]], ListingFault | None]:
        defaults = {
            "openai": listings.OPENAI_MODELS,
            "anthropic": listings.ANTHROPIC_MODELS,
            "ollama": listings.OLLAMA_MODELS,
        }
        with self._lock:
            return self._listings.get(protocol, defaults[protocol]), self._listing_faults.get(protocol)

    def _record_listing(self, request: RecordedRequest) -> None:
        with self._lock:
            self._listing_requests.append(request)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            return self._requests[-1]

    def _record(self, request: RecordedRequest) -> None:
        if not self._record_requests:
            return
        with self._lock:
            self._requests.append(request)

    def _next(self) -> ScriptItem | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler], fake: FakeLLMServer) -> None:
        super().__init__(address, handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-answer are part of the job; stay quiet."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes: without TCP_NODELAY, Nagle's algorithm
    # and the client's delayed ACK add ~40 ms to every answer, which no real vendor has.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/__requests__":
            self._send_json(200, [request.to_json() for request in self.server.fake.requests])
        elif path == "/__health__":
            self._send_json(200, {"ok": True})
        elif path in MODELS_PATHS:
            anthropic = bool(self.headers.get("x-api-key") or self.headers.get("anthropic-version"))
            self._models("anthropic" if anthropic else "openai", path)
        elif path == "/api/tags":
            self._models("ollama", path)
        else:
            self._send_json(404, {"error": f"no route for GET {path}"})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = urlsplit(self.path).path
        if path == "/__script__":
            try:
                items = items_from_json(json.loads(raw or b"[]"))
            except (ValueError, TypeError, KeyError) as exc:
                self._send_json(400, {"error": f"Bad script: {exc!r}"})
                return
            self.server.fake.script(*items)
            self._send_json(200, {"queued": len(items), "pending": self.server.fake.pending})
        elif path == "/__reset__":
            self.server.fake.reset()
            self._send_json(200, {"ok": True})
        elif path == ANTHROPIC_PATH:
            self._model_call("anthropic", path, raw)
        elif path in OPENAI_PATHS:
            self._model_call("openai", path, raw)
        elif path == "/api/show":
            self._ollama_show(raw)
        elif path in EMBEDDINGS_PATHS:
            self._embeddings(path, raw)
        else:
            self._send_json(404, {"error": f"no route for POST {path}"})

    # --- listings and embeddings ---------------------------------------------

    def _models(self, protocol: ListingProtocol, path: str) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.fake._record_listing(RecordedRequest("GET", path, headers, None))
        models, fault = self.server.fake._listing(protocol)
        if fault is not None and self._listing_fault(fault):
            return
        if protocol == "anthropic":
            self._send_json(200, listings.anthropic_listing(models))
        elif protocol == "ollama":
            self._send_json(200, listings.ollama_tags(models))
        else:
            self._send_json(200, listings.openai_listing(models))

    def _listing_fault(self, fault: ListingFault) -> bool:
        """Answer as ``fault`` says; ``False`` when it only delays the answer (a timeout the client outlived)."""
        if fault.kind == "timeout":
            time.sleep(fault.stall)
            self._send_json(200, {"data": []})
        elif fault.kind == "401":
            self._send_json(401, {"error": {"type": "authentication_error", "message": "invalid x-api-key"}})
        elif fault.kind == "garbage":
            self._send_bytes(200, b"<html><body>Welcome to nginx!</body></html>", "application/json")
        else:
            self._send_json(200, {"models_here": "soon", "data": "not a list"})
        return True

    def _ollama_show(self, raw: bytes) -> None:
        body = json.loads(raw or b"{}")
        self.server.fake._record_listing(RecordedRequest("POST", "/api/show", {}, body))
        models, fault = self.server.fake._listing("ollama")
        if fault is not None and self._listing_fault(fault):
            return
        shown = listings.ollama_show(models, str(body.get("model") or body.get("name") or ""))
        if shown is None:
            self._send_json(404, {"error": f"model '{body.get('model')}' not found"})
        else:
            self._send_json(200, shown)

    def _embeddings(self, path: str, raw: bytes) -> None:
        body = json.loads(raw or b"{}")
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.fake._record_listing(RecordedRequest("POST", path, headers, body))
        self._send_json(200, listings.embeddings_answer(body))

    # --- model calls ---------------------------------------------------------

    def _model_call(self, protocol: Protocol, path: str, raw: bytes) -> None:
        wire = anthropic_wire if protocol == "anthropic" else openai_wire
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            self._send_json(400, wire.error_body(400, f"Invalid JSON body: {exc}"))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.fake._record(RecordedRequest("POST", path, headers, body))
        if not headers.get("authorization") and not headers.get("x-api-key"):
            self._send_json(401, wire.error_body(401, "No API key was sent"))
            return
        problem = wire.problems(body)
        if problem:
            self._send_json(400, wire.error_body(400, problem))
            return
        exchange = read_anthropic(body) if protocol == "anthropic" else read_openai(body)
        item = self.server.fake._next() or auto_reply(exchange)
        if isinstance(item, Reply) and item.delay > 0:
            time.sleep(item.delay)
        if isinstance(item, Fault):
            self._fault(item, exchange)
        elif exchange.stream:
            self._send_stream(_frames(item, exchange))
        else:
            self._send_json(200, _whole(item, exchange))

    def _fault(self, fault: Fault, exchange: Exchange) -> None:
        anthropic = exchange.protocol == "anthropic"
        if fault.kind in ("http_error", "prompt_too_long"):
            if anthropic:
                error = anthropic_wire.error_body(fault.status, fault.message)
            else:
                error = openai_wire.error_body(
                    fault.status, fault.message, context_window=fault.kind == "prompt_too_long"
                )
            extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            self._send_json(fault.status, error, extra)
        elif fault.kind == "malformed_json":
            if not exchange.stream:
                self._send_bytes(200, _BROKEN_JSON, "application/json")
            elif anthropic:
                start = anthropic_wire.stream(Reply(), exchange, blocks=[])[0]
                self._send_stream([start, b"event: content_block_start\ndata: {not json\n\n"])
            else:
                self._send_stream([b"data: {not json\n\n"])
        elif fault.kind == "drop_mid_stream":
            partial = Reply(text=fault.partial_text)
            if exchange.stream:
                frames = _frames(partial, exchange)
                self._send_stream(frames, drop_after=max(1, len(frames) - _TRAILING_FRAMES))
            else:
                whole = json.dumps(_whole(partial, exchange)).encode()
                self._send_bytes(200, whole[: len(whole) // 2], "application/json", declared_length=len(whole))
        elif fault.kind == "error_event":
            self._error_event(fault, exchange)
        else:
            # no_terminal_event / empty_completion: an answer with no content (or only the partial text).
            terminal = fault.kind == "empty_completion"
            reply = Reply(text=fault.partial_text, finish_reason="stop" if terminal else None)
            blocks = [{"type": "text", "text": fault.partial_text}] if fault.partial_text else []
            if exchange.stream:
                frames = (
                    anthropic_wire.stream(reply, exchange, blocks=blocks, terminal=terminal)
                    if anthropic
                    else openai_wire.stream(reply, exchange, terminal=terminal)
                )
                self._send_stream(frames)
            else:
                body = anthropic_wire.message(reply, exchange, blocks=blocks) if anthropic else _whole(reply, exchange)
                self._send_json(200, body)

    def _error_event(self, fault: Fault, exchange: Exchange) -> None:
        error_type = fault.error_type or "api_error"
        if not exchange.stream:
            wire = anthropic_wire if exchange.protocol == "anthropic" else openai_wire
            self._send_json(fault.status, wire.error_body(fault.status, fault.message))
            return
        partial = Reply(text=fault.partial_text, usage=None)
        if exchange.protocol == "anthropic":
            blocks = [{"type": "text", "text": fault.partial_text}] if fault.partial_text else []
            frames = anthropic_wire.stream(partial, exchange, blocks=blocks, terminal=False)
            frames.append(anthropic_wire.error_event(error_type, fault.message))
        else:
            frames = [f for f in openai_wire.stream(partial, exchange, terminal=False) if f != openai_wire.DONE]
            frames.append(openai_wire.error_event(error_type, fault.message))
        self._send_stream(frames)

    # --- writing -------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers=headers)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        content_type: str,
        *,
        headers: dict[str, str] | None = None,
        declared_length: int | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(declared_length or len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._write(data)
        if declared_length is not None and declared_length > len(data):
            self._drop_connection()

    def _send_stream(self, frames: list[bytes], *, drop_after: int | None = None) -> None:
        """Chunked SSE, so a dropped connection is a protocol error and not a clean end."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for position, frame in enumerate(frames):
            if position == drop_after:
                self._drop_connection()
                return
            self._write(b"%x\r\n%s\r\n" % (len(frame), frame))
        self._write(b"0\r\n\r\n")

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _drop_connection(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _frames(reply: Reply, exchange: Exchange) -> list[bytes]:
    if exchange.protocol == "anthropic":
        return anthropic_wire.stream(reply, exchange)
    return openai_wire.stream(reply, exchange)


def _whole(reply: Reply, exchange: Exchange) -> dict[str, Any]:
    if exchange.protocol == "anthropic":
        return anthropic_wire.message(reply, exchange)
    return openai_wire.completion(reply, exchange)
