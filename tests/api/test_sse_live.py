"""SSE against a live server (Daphne): clients that hang up mid-stream, and keep-alives on long silences.

A client that disconnects loses nothing the server persisted: the turn runs to the
end in the server, its rows are stored, its run ends ``completed``, and the agent
takes the next message. A model that stays silent longer than
``SSE_KEEPALIVE_SECONDS`` (0.2 s here) makes the stream send ``: keep-alive``
comments, or Letta's ping events with ``include_pings``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.fake_llm.script import Reply
from tests.support.live_server import start_inprocess_server
from tests.support.polling import poll
from tests.support.streams import assemble, seq_ids

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.timeout(120)]

KEEPALIVE_SECONDS = 0.2
SILENCE_SECONDS = 1.5
FINISHED = {"completed", "failed", "cancelled"}
ANTHROPIC = "anthropic/claude-sonnet-4-5-20250929"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    # The demo model streams a token every 50 ms: a turn lasts a few seconds.
    env = fake_llm_server.server_env() | {"SSE_KEEPALIVE_SECONDS": str(KEEPALIVE_SECONDS), "DEMO_TOKEN_DELAY": "0.05"}
    with start_inprocess_server(tmp_path_factory.mktemp("sse"), extra_env=env) as live:
        yield live


@pytest.fixture
def api(server: LiveServer) -> Iterator[httpx.Client]:
    with server.api() as client:
        yield client


def new_agent(api: httpx.Client, model: str) -> str:
    return str(api.post("/v1/agents/", json={"name": "sse", "model": model}).raise_for_status().json()["id"])


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def finished_run(api: httpx.Client, run_id: str) -> dict[str, Any]:
    return poll(lambda: api.get(f"/v1/runs/{run_id}").json(), lambda run: run["status"] in FINISHED)


def latest_run(api: httpx.Client, agent_id: str) -> dict[str, Any]:
    return poll(lambda: api.get("/v1/runs/", params={"agent_id": agent_id}).json(), bool)[0]


def assert_it_answers_again(api: httpx.Client, agent_id: str) -> None:
    response = api.post(f"/v1/agents/{agent_id}/messages", json=user("Are you still there?"))

    assert response.status_code == 200, response.text
    assert response.json()["stop_reason"]["stop_reason"] == "end_turn"


def test_a_client_that_disconnects_mid_token_stream_loses_nothing_and_frees_the_agent(api: httpx.Client) -> None:
    agent_id = new_agent(api, "demo/echo-1")
    body = user("Tell me about yourself, " + "in many words " * 10) | {"stream_tokens": True}
    chunks: list[dict[str, Any]] = []

    with api.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=body) as response:
        for line in response.iter_lines():
            if line.startswith("data: {"):
                chunks.append(json.loads(line.removeprefix("data: ")))
            if sum(chunk["message_type"] == "assistant_message" for chunk in chunks) == 3:
                break  # hang up three tokens into the answer
    run_id = chunks[0]["run_id"]
    at_hang_up = api.get(f"/v1/runs/{run_id}").json()["status"]

    run = finished_run(api, run_id)
    stored = [m for m in api.get(f"/v1/runs/{run_id}/messages").json() if m["message_type"] == "assistant_message"]
    heard = "".join(chunk["content"] for chunk in chunks if chunk["message_type"] == "assistant_message")
    assert at_hang_up == "running"
    assert (run["status"], run["stop_reason"]) == ("completed", "end_turn")
    assert len(stored) == 1
    assert stored[0]["content"].startswith(heard)
    assert len(stored[0]["content"]) > len(heard)
    assert_it_answers_again(api, agent_id)


def test_a_client_that_disconnects_while_the_model_is_silent_loses_nothing(
    api: httpx.Client, fake_llm: FakeLLMServer
) -> None:
    agent_id = new_agent(api, ANTHROPIC)
    fake_llm.script(Reply(text="A slow but complete answer.", delay=SILENCE_SECONDS))

    with api.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=user("Take your time.")) as response:
        first_line = next(response.iter_lines())

    run = finished_run(api, latest_run(api, agent_id)["id"])
    said = [
        m["content"]
        for m in api.get(f"/v1/runs/{run['id']}/messages").json()
        if m["message_type"] == "assistant_message"
    ]
    assert first_line == ": keep-alive"
    assert (run["status"], run["stop_reason"]) == ("completed", "end_turn")
    assert said == ["A slow but complete answer."]
    assert_it_answers_again(api, agent_id)


def stream_lines(api: httpx.Client, path: str, body: dict[str, Any]) -> list[str]:
    with api.stream("POST", path, json=body) as response:
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        return [line for line in response.iter_lines() if line]


def silent_model_stream(
    api: httpx.Client, fake_llm: FakeLLMServer, answer: str, route: str, body: dict[str, Any]
) -> list[str]:
    """The lines streamed for ``body`` on a new agent's ``route``, its model silent for ``SILENCE_SECONDS``
    before it says ``answer``."""
    agent_id = new_agent(api, ANTHROPIC)
    fake_llm.script(Reply(text=answer, delay=SILENCE_SECONDS))
    return stream_lines(api, f"/v1/agents/{agent_id}/{route}", body)


def test_a_silent_model_gets_keep_alive_comments_then_the_whole_answer(
    api: httpx.Client, fake_llm: FakeLLMServer
) -> None:
    lines = silent_model_stream(api, fake_llm, "Worth the wait.", "messages/stream", user("Think hard."))

    first_data = next(index for index, line in enumerate(lines) if line.startswith("data: "))
    assert first_data >= 2
    assert set(lines[:first_data]) == {": keep-alive"}
    frames = [json.loads(line.removeprefix("data: ")) for line in lines[first_data:-1]]
    assert [f["content"] for f in frames if f["message_type"] == "assistant_message"] == ["Worth the wait."]
    assert frames[-2] == {"message_type": "stop_reason", "stop_reason": "end_turn"}
    assert lines[-1] == "data: [DONE]"


# letta-client 1.x streams through ``POST …/messages`` with ``"streaming": true``; 0.1.324 through ``/stream``.
STREAM_ROUTES = pytest.mark.parametrize(
    ("route", "streaming"), [("messages/stream", {}), ("messages", {"streaming": True})], ids=["stream", "streaming"]
)


@STREAM_ROUTES
def test_with_include_pings_a_silent_model_gets_ping_events_instead(
    api: httpx.Client, fake_llm: FakeLLMServer, route: str, streaming: dict[str, Any]
) -> None:
    lines = silent_model_stream(
        api, fake_llm, "Pinged.", route, user("Ping me.") | {"include_pings": True, **streaming}
    )

    frames = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    pings = [f for f in frames if f["message_type"] == "ping"]
    assert ": keep-alive" not in lines
    assert len(pings) >= 2
    assert all(p["id"].startswith("ping-") for p in pings)
    assert frames.index(pings[0]) == 0
    assert lines[-1] == "data: [DONE]"


@STREAM_ROUTES
def test_the_stream_of_a_background_run_keeps_alive_too(
    api: httpx.Client, fake_llm: FakeLLMServer, route: str, streaming: dict[str, Any]
) -> None:
    body = user("Go.") | {"background": True, **streaming}
    lines = silent_model_stream(api, fake_llm, "From the background.", route, body)

    assert lines[0] == ": keep-alive"
    frames = [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: {")]
    said = [text for kind, _, text in assemble(frames) if kind == "assistant_message"]
    assert said == ["From the background."]
    assert seq_ids(frames) == sorted(set(seq_ids(frames)))
    assert lines[-1] == "data: [DONE]"
