"""Letta Code's own requests against a live server: ``background: true`` with ``stream_tokens: true``
(what it always sends) streams token deltas, and the same events as the inline stream."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.support.live_server import start_inprocess_server
from tests.support.streams import assemble

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    env = {"DEMO_TOKEN_DELAY": "0.05"}  # the demo model streams a token every 50 ms
    with start_inprocess_server(tmp_path_factory.mktemp("letta-code"), extra_env=env) as live:
        yield live


@pytest.fixture
def api(server: LiveServer) -> Iterator[httpx.Client]:
    with server.api(timeout=60) as client:
        yield client


def chunks_of(api: httpx.Client, agent_id: str, **options: Any) -> list[dict[str, Any]]:
    body = {"messages": [{"role": "user", "content": "Tell me about yourself, in a few words."}], **options}
    with api.stream("POST", f"/v1/agents/{agent_id}/messages/stream", json=body) as response:
        assert response.status_code == 200
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    return [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: {")]


def new_agent(api: httpx.Client) -> str:
    return str(api.post("/v1/agents/", json={"name": "code", "model": "demo/echo-1"}).raise_for_status().json()["id"])


def test_a_background_stream_with_stream_tokens_streams_token_deltas(api: httpx.Client) -> None:
    chunks = chunks_of(api, new_agent(api), background=True, stream_tokens=True)

    said = [c for c in chunks if c["message_type"] == "assistant_message"]
    assert len(said) > 3, said
    assert len({c["otid"] for c in said}) == 1
    assert chunks[-2:][0]["message_type"] == "stop_reason"


def test_background_and_inline_token_streams_send_the_same_messages(api: httpx.Client) -> None:
    inline = chunks_of(api, new_agent(api), stream_tokens=True)
    background = chunks_of(api, new_agent(api), background=True, stream_tokens=True)

    def shape(chunks: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return [(kind, text) for kind, _otid, text in assemble(chunks) if kind != "reasoning_message"]

    assert [kind for kind, _ in shape(inline)] == [kind for kind, _ in shape(background)]
    assert [c["message_type"] for c in inline[-2:]] == [c["message_type"] for c in background[-2:]]


def test_a_background_stream_honours_include_return_message_types(api: httpx.Client) -> None:
    chunks = chunks_of(
        api, new_agent(api), background=True, stream_tokens=True, include_return_message_types=["assistant_message"]
    )

    assert {c["message_type"] for c in chunks} == {"assistant_message", "stop_reason", "usage_statistics"}
