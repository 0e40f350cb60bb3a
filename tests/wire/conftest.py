"""The Letta 0.13.0 capture that the wire projection is compared with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CAPTURE = Path(__file__).parent / "fixtures" / "letta_wire" / "letta-0.13.0_approvals.json"


@pytest.fixture(scope="session")
def letta_capture() -> list[dict[str, Any]]:
    """HTTP exchanges of a real Letta 0.13.0 server running seed 000 (see ``fixtures/letta_wire/README.md``)."""
    return json.loads(CAPTURE.read_text())


def captured_messages(capture: list[dict[str, Any]], message_type: str) -> list[dict[str, Any]]:
    """The LettaMessages of ``message_type`` that Letta returned from ``messages.list``."""
    return [
        message
        for exchange in capture
        if exchange["method"] == "GET" and "/messages" in exchange["path"]
        for message in exchange["response_body"]
        if message["message_type"] == message_type
    ]


def captured_response(capture: list[dict[str, Any]], method: str, path_prefix: str) -> Any:
    return next(e["response_body"] for e in capture if e["method"] == method and e["path"].startswith(path_prefix))
