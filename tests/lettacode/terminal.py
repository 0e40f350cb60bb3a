"""A program in a pseudo-terminal, read as a person reads its screen: text without escape codes.

Letta Code's interactive mode is an Ink (React) TUI: it redraws regions of the screen with
cursor moves and colours. ``Terminal`` keeps everything the program wrote, and ``expect``
searches the output written since the last match with the escape sequences removed, so a
test waits for words ("Do you want to proceed?") and sends keys (Enter, Esc, arrows).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

SGR = re.compile(rb"\x1b\[[0-9;:]*m")  # colours and styles: no space on screen
ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0e-\x1f]")
ENTER = "\r"
ESC = "\x1b"
DOWN = "\x1b[B"
UP = "\x1b[A"
CTRL_C = "\x03"


class TerminalTimeout(AssertionError):
    """The text did not appear in time; the message ends with the screen's recent text."""


def plain(raw: bytes) -> str:
    """``raw`` without terminal escape sequences, with whitespace runs collapsed."""
    return re.sub(r"[ \t]+", " ", ANSI.sub(b" ", SGR.sub(b"", raw)).decode(errors="replace"))


class Terminal:
    """``argv`` in a pty of ``columns`` x ``rows``; the reader thread collects what it writes."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        columns: int = 120,
        rows: int = 40,
    ) -> None:
        controller, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env), stdin=child, stdout=child, stderr=child, start_new_session=True
        )
        os.close(child)
        self._fd = controller
        self._output = bytearray()
        self._mark = 0
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="terminal-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd], [], [], 0.1)
                if not ready:
                    if self.process.poll() is not None:
                        return
                    continue
                chunk = os.read(self._fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._output.extend(chunk)

    def text(self, *, since_mark: bool = False) -> str:
        with self._lock:
            raw = bytes(self._output[self._mark :] if since_mark else self._output)
        return plain(raw)

    def expect(self, pattern: str, *, timeout: float = 60.0) -> re.Match[str]:
        """Wait until ``pattern`` (a regex) appears in the output since the last match; move the mark past it."""
        regex = re.compile(pattern, re.IGNORECASE)
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                start = self._mark
                raw = bytes(self._output[start:])
            match = regex.search(plain(raw))
            if match:
                with self._lock:
                    self._mark = start + len(raw)
                return match
            if time.monotonic() > deadline or (self.process.poll() is not None and not self._reader.is_alive()):
                tail = self.text()[-3000:]
                raise TerminalTimeout(f"{pattern!r} did not appear within {timeout}s; the screen said:\n{tail}")
            time.sleep(0.1)

    def send(self, keys: str, *, pause: float = 0.3) -> None:
        """Type ``keys`` (text or the key constants above), then give the TUI ``pause`` seconds to react."""
        os.write(self._fd, keys.encode())
        time.sleep(pause)

    def type(self, text: str) -> None:
        """Type ``text`` a key at a time, as a person does (a TUI takes one write of many keys for a paste)."""
        for key in text:
            os.write(self._fd, key.encode())
            time.sleep(0.06)
        time.sleep(0.3)

    def type_line(self, text: str) -> None:
        """Type ``text``, then press Enter."""
        self.type(text)
        self.send(ENTER)

    def settle(self, quiet: float = 1.0, *, timeout: float = 15.0) -> None:
        """Wait until the program has written nothing for ``quiet`` seconds (its spinners stopped)."""
        deadline = time.monotonic() + timeout
        seen, since = len(self._output), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.1)
            with self._lock:
                size = len(self._output)
            if size != seen:
                seen, since = size, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        self._reader.join(timeout=5)
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
