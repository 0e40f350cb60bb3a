"""Letta Code 0.32.18 (``make letta-code``) as a user runs it: a home of its own, a project folder, our server.

Letta Code reads ``LETTA_BASE_URL`` and ``LETTA_API_KEY`` (with a key set it skips its login)
and keeps its settings (the agent it made, the last session) in ``$HOME/.letta``. Each
``LettaCode`` is one person on one machine: a fresh home is a new user. ``headless`` runs
``letta -p`` with ``--output-format stream-json`` and returns its events; ``terminal`` starts
the interactive TUI in a pty.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from django.conf import settings

from tests.lettacode.terminal import ENTER, Terminal

if TYPE_CHECKING:
    from tests.support.live_server import LiveServer

VERSION = "0.32.18"
FOLDER = Path(settings.BASE_DIR) / ".letta-code"
BUNDLE = FOLDER / "package" / "letta.js"
INSTALLED = FOLDER / f".installed-{VERSION}"
HEADLESS_TIMEOUT_S = 120
# The prompt box is ready once the welcome lines of a new or resumed conversation are drawn, or
# (a new agent made with --new-agent) once its placeholder suggests a first prompt.
READY = r"(Starting new|Resuming) conversation with|\u203a Try \""
APPROVAL = r"Enter to select"


def installed() -> bool:
    return INSTALLED.exists() and BUNDLE.exists()


@dataclass(frozen=True)
class HeadlessRun:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str

    @property
    def result(self) -> dict[str, Any]:
        """The closing ``result`` event (``subtype`` ``success`` or an error)."""
        results = [event for event in self.events if event.get("type") == "result"]
        assert results, f"no result event (exit {self.returncode}):\n{self.stderr}\n{self.events}"
        return results[-1]

    def messages(self, message_type: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("message_type") == message_type]


@dataclass
class LettaCode:
    server: LiveServer
    home: Path
    project: Path

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "LETTA_BASE_URL": self.server.url,
            "LETTA_API_KEY": self.server.api_key,
            "DISABLE_AUTOUPDATER": "1",
            "LETTA_CODE_TELEM": "0",
        }

    def headless(self, prompt: str, *options: str) -> HeadlessRun:
        """``letta -p prompt options… --output-format stream-json``: its events, one JSON object a line."""
        done = self.command("-p", prompt, *options, "--output-format", "stream-json")
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return HeadlessRun(done.returncode, events, done.stderr)

    def command(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        """A subcommand (``letta connect …``): its exit status, stdout and stderr."""
        return subprocess.run(
            ["node", str(BUNDLE), *arguments],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=HEADLESS_TIMEOUT_S,
            check=False,
        )

    def api(self) -> httpx.Client:
        """Our API with this user's key, to read what Letta Code made."""
        return self.server.api()

    def terminal(self, *options: str) -> Terminal:
        """The interactive TUI, in standard permission mode unless ``options`` say otherwise."""
        argv = ["node", str(BUNDLE), *options]
        return Terminal(argv, cwd=self.project, env=self.env())

    def open_session(self, *options: str) -> Terminal:
        """The TUI with its prompt box ready."""
        screen = self.terminal(*options)
        try:
            screen.expect(READY, timeout=90)
        except BaseException:
            screen.close()
            raise
        screen.settle()
        return screen

    def settings(self) -> dict[str, Any]:
        """``~/.letta/settings.json``: the agent Letta Code made and its last session."""
        return dict(json.loads((self.home / ".letta" / "settings.json").read_text()))


def ask(screen: Terminal, text: str) -> None:
    """Type a message into the prompt box and send it."""
    screen.type(text)
    screen.send(ENTER)
