"""Issue 14, item 1: no tool schema can freeze the server with a backtracking regular expression."""

from __future__ import annotations

import json
import statistics
import threading
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.support.api import api_client
from tests.support.live_server import start_live_server
from tools.validation import ArgumentError, validate_arguments

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import Cast

EVIL = "^(a+)+$"
EVIL_PARAMETERS = {
    "type": "object",
    "properties": {"text": {"type": "string", "pattern": EVIL}},
    "required": ["text"],
}
EVIL_ARGUMENT = "a" * 50 + "b"
ECHO_SOURCE = "def echo(text: str) -> str:\n    return text\n"


def test_a_backtracking_pattern_checks_a_fifty_character_argument_in_linear_time():
    started = time.monotonic()
    with pytest.raises(ArgumentError, match="does not match"):
        validate_arguments("echo", EVIL_PARAMETERS, json.dumps({"text": EVIL_ARGUMENT}))
    with pytest.raises(ArgumentError, match="unexpected argument"):
        validate_arguments(
            "echo",
            {"type": "object", "patternProperties": {EVIL: {"type": "string"}}},
            json.dumps({EVIL_ARGUMENT: "x"}),
        )
    assert time.monotonic() - started < 0.5
    assert validate_arguments("echo", EVIL_PARAMETERS, json.dumps({"text": "aaaa"})) == {"text": "aaaa"}


@pytest.mark.parametrize(
    ("parameters", "where"),
    [
        (
            {"type": "object", "properties": {"text": {"type": "string", "pattern": "(?<=a)b"}}},
            "properties.text.pattern",
        ),
        ({"type": "object", "patternProperties": {"(a)\\1": {"type": "string"}}}, "patternProperties"),
        ({"type": "object", "patternProperties": {"a": {}}, "unevaluatedProperties": False}, "unevaluatedProperties"),
    ],
)
def test_a_tool_whose_pattern_cannot_run_in_linear_time_is_refused_with_a_400_naming_the_field(
    cast: Cast, parameters: dict, where: str
):
    client = api_client(cast.org_a, cast.alice)
    response = client.post(
        "/v1/tools/",
        {"source_code": ECHO_SOURCE, "args_json_schema": parameters},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert where in response.json()["detail"]


@pytest.mark.live_server
def test_health_answers_within_100_ms_while_a_malicious_argument_is_validated(tmp_path: Path):
    with start_live_server(tmp_path) as live:
        headers = {"Authorization": f"Bearer {live.api_key}"}
        with httpx.Client(base_url=live.url, headers=headers, timeout=60) as client:
            tool = client.post("/v1/tools/", json={"source_code": ECHO_SOURCE, "args_json_schema": EVIL_PARAMETERS})
            assert tool.status_code == 200, tool.text
            agent = client.post("/v1/agents/", json={"name": "victim", "model": "demo/echo-1"})
            assert agent.status_code == 200, agent.text
            agent_id, tool_id = agent.json()["id"], tool.json()["id"]
            assert client.patch(f"/v1/agents/{agent_id}/tools/attach/{tool_id}").status_code == 200

            answers: list[httpx.Response] = []
            attack = threading.Thread(
                target=lambda: answers.append(
                    client.post(
                        f"/v1/agents/{agent_id}/messages",
                        json={"messages": [{"role": "user", "content": f"call echo with text={EVIL_ARGUMENT}"}]},
                    )
                )
            )
            attack.start()
            timings: list[float] = []
            with httpx.Client(base_url=live.url, timeout=30) as probe:
                while attack.is_alive() or not timings:
                    started = time.monotonic()
                    assert probe.get("/v1/health/").status_code == 200
                    timings.append(time.monotonic() - started)
                    time.sleep(0.02)
            attack.join()

    # Before the fix one probe waited for the whole validation (17 s with a 28-character argument).
    # The median says "within 100 ms"; the slowest only has to show that nothing stalled, so a
    # loaded 2-core CI machine does not make this flaky.
    assert statistics.median(timings) < 0.1
    assert max(timings) < 1.0
    returns = [m for m in answers[0].json()["messages"] if m["message_type"] == "tool_return_message"]
    assert returns[0]["status"] == "error", returns[0]["tool_return"]
    assert "does not match" in returns[0]["tool_return"]
