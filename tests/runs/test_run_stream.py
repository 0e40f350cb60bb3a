"""A run's resumable stream on a live server: token deltas live, and resuming after any chunk
(even mid-message) with nothing lost and nothing doubled (``agents.api.run_stream``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.support.live_server import start_inprocess_server
from tests.support.polling import poll
from tests.support.streams import TRAILERS, assemble, seq_ids
from tests.tool_sources import DICE_SOURCE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.timeout(120)]

LONG_MESSAGE = "Please repeat this back to me: " + "the quick brown fox jumps over the lazy dog " * 6


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # The demo model streams a token every 20 ms: a turn lasts a few seconds.
    with start_inprocess_server(tmp_path_factory.mktemp("run-stream"), extra_env={"DEMO_TOKEN_DELAY": "0.02"}) as live:
        yield live


@pytest.fixture
def api(server: LiveServer) -> Iterator[httpx.Client]:
    with server.api() as client:
        yield client


def new_agent(api: httpx.Client, *tool_sources: str) -> str:
    tool_ids = [api.put("/v1/tools/", json={"source_code": s}).raise_for_status().json()["id"] for s in tool_sources]
    body = {"name": "stream", "model": "demo/echo-1", "tool_ids": tool_ids}
    return str(api.post("/v1/agents/", json=body).raise_for_status().json()["id"])


def chunks(
    api: httpx.Client, path: str, body: dict[str, Any], *, hang_up: Callable[[list[Any]], bool] | None = None
) -> list[dict[str, Any]]:
    """The stream's JSON chunks; with ``hang_up``, the client disconnects once it holds for what arrived."""
    received: list[dict[str, Any]] = []
    with api.stream("POST", path, json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            received.append(json.loads(line.removeprefix("data: ")))
            if hang_up is not None and hang_up(received):
                break
    return received


def assistant_chunks(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in received if c["message_type"] == "assistant_message"]


def test_a_background_stream_sends_token_deltas_that_add_up_to_the_stored_answer(api: httpx.Client):
    agent_id = new_agent(api)

    received = chunks(api, f"/v1/agents/{agent_id}/messages/stream", {"input": LONG_MESSAGE, "background": True})

    answer = assistant_chunks(received)
    assert len(answer) > 3, "the answer came whole, not as deltas"
    assert len({c["otid"] for c in answer}) == 1
    stored = api.get(f"/v1/agents/{agent_id}/messages").json()
    said = [m["content"] for m in stored if m["message_type"] == "assistant_message"]
    assert [text for kind, _, text in assemble(received) if kind == "assistant_message"] == said
    assert seq_ids(received) == sorted(set(seq_ids(received)))
    assert [c["message_type"] for c in received[-2:]] == ["stop_reason", "usage_statistics"]


def test_resuming_mid_message_loses_nothing_and_doubles_nothing(api: httpx.Client):
    agent_id = new_agent(api)
    run = api.post(f"/v1/agents/{agent_id}/messages/async", json={"input": LONG_MESSAGE}).raise_for_status().json()
    stream = f"/v1/runs/{run['id']}/stream"

    first = chunks(api, stream, {}, hang_up=lambda received: len(assistant_chunks(received)) >= 2)
    rest = chunks(api, stream, {"starting_after": seq_ids(first)[-1]})

    poll(lambda: api.get(f"/v1/runs/{run['id']}").json(), lambda r: r["status"] == "completed")
    whole = chunks(api, stream, {})
    assert assemble(first + rest) == assemble(whole)
    assert seq_ids(first + rest) == sorted(set(seq_ids(first + rest)))
    assert rest[-2]["stop_reason"] == "end_turn"


def test_a_background_stream_sends_tool_call_deltas_and_resumes_in_the_middle_of_a_call(api: httpx.Client):
    agent_id = new_agent(api, DICE_SOURCE)
    body = {"input": "call roll_dice with num_sides=6", "background": True}
    stream = f"/v1/agents/{agent_id}/messages/stream"

    def calls(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [c for c in received if c["message_type"] == "tool_call_message"]

    first = chunks(api, stream, body, hang_up=lambda received: len(calls(received)) >= 2)
    [run] = api.get("/v1/runs/", params={"agent_id": agent_id}).json()
    rest = chunks(api, f"/v1/runs/{run['id']}/stream", {"starting_after": seq_ids(first)[-1]})

    poll(lambda: api.get(f"/v1/runs/{run['id']}").json(), lambda r: r["status"] == "completed")
    whole = chunks(api, f"/v1/runs/{run['id']}/stream", {})
    assert [c["tool_calls"] for c in calls(first)] == [None, None], "the call came whole, not as deltas"
    assert len({(c["id"], c["otid"]) for c in calls(first + rest)}) == 1
    assert assemble(first + rest) == assemble(whole)
    assert seq_ids(first + rest) == sorted(set(seq_ids(first + rest)))


def test_a_stream_opened_after_a_tools_results_keeps_them_in_their_place(api: httpx.Client):
    agent_id = new_agent(api, DICE_SOURCE)
    run = api.post(f"/v1/agents/{agent_id}/messages/async", json={"input": "call roll_dice with num_sides=6"}).json()
    stream = f"/v1/runs/{run['id']}/stream"
    poll(
        lambda: [m["message_type"] for m in api.get(f"/v1/runs/{run['id']}/messages").json()],
        lambda kinds: "tool_return_message" in kinds,
        interval=0.01,
    )

    joined = chunks(api, stream, {})

    whole = chunks(api, stream, {})
    assert [kind for kind, _, _ in assemble(joined)][-3:] == [
        "tool_return_message",
        "reasoning_message",
        "assistant_message",
    ]
    assert assemble(joined) == assemble(whole)
    assert seq_ids(joined) == sorted(set(seq_ids(joined)))


def test_a_finished_run_streams_whole_messages_and_resumes_after_any_of_them(api: httpx.Client):
    agent_id = new_agent(api)
    api.post(f"/v1/agents/{agent_id}/messages", json={"input": "call roll_dice"}).raise_for_status()
    [run] = api.get("/v1/runs/", params={"agent_id": agent_id}).json()
    stream = f"/v1/runs/{run['id']}/stream"

    whole = [c for c in chunks(api, stream, {}) if c["message_type"] not in TRAILERS]
    for cut in range(len(whole)):
        after = whole[cut - 1]["seq_id"] if cut else 0
        resumed = [c for c in chunks(api, stream, {"starting_after": after}) if c["message_type"] not in TRAILERS]
        assert resumed == whole[cut:]


@pytest.mark.parametrize("stream_tokens", [True, False], ids=["tokens", "whole"])
def test_an_inline_stream_numbers_its_chunks_like_the_runs_stream_which_resumes_after_any_of_them(
    api: httpx.Client, stream_tokens: bool
):
    agent_id = new_agent(api, DICE_SOURCE)
    body = {"input": "call roll_dice with num_sides=6", "stream_tokens": stream_tokens}
    inline = [
        c for c in chunks(api, f"/v1/agents/{agent_id}/messages/stream", body) if c["message_type"] not in TRAILERS
    ]
    [run] = api.get("/v1/runs/", params={"agent_id": agent_id}).json()
    run_stream = f"/v1/runs/{run['id']}/stream"

    stored = chunks(api, run_stream, {})
    assert seq_ids(inline) == sorted(set(seq_ids(inline)))
    assert assemble(inline) == assemble(stored)
    for cut, chunk in enumerate(inline):
        resumed = chunks(api, run_stream, {"starting_after": chunk["seq_id"]})
        assert assemble(inline[: cut + 1] + resumed) == assemble(stored), chunk
