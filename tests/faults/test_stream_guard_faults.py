"""A stream that has started never raises (Daphne could neither answer nor log it): it ends with
a ``stream_interrupted`` error frame, or goes on without the channel layer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from agents.api import stream_guard
from agents.api.stream_guard import StreamGuard

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.django_db(transaction=True)


class LostLayer:
    """A channel layer whose Redis went away: every call fails as channels-redis does then."""

    async def new_channel(self) -> str:
        return "specific.lost!1"

    async def group_add(self, group: str, channel: str) -> None:
        raise ConnectionError("Connection closed by server.")

    async def group_discard(self, group: str, channel: str) -> None:
        raise ConnectionError("Connection closed by server.")

    async def receive(self, channel: str) -> dict[str, Any]:
        raise ConnectionError("Connection closed by server.")


def guard_of(cast: Any) -> StreamGuard:
    return StreamGuard(organization_id=cast.org_a.pk, user_id=cast.alice.pk, api_key_id=None, session_key=None)


async def frames(body: AsyncIterator[bytes]) -> list[bytes]:
    return [chunk async for chunk in body]


async def test_a_body_that_fails_midway_ends_with_an_interrupted_frame(cast, monkeypatch):
    monkeypatch.setattr(stream_guard, "get_channel_layer", lambda: None)  # the body alone fails here

    async def body() -> AsyncIterator[bytes]:
        yield b"data: first\n\n"
        raise ConnectionError("the run's source went away")

    sent = await frames(guard_of(cast).guard(body()))

    assert sent[0] == b"data: first\n\n"
    last = json.loads(sent[-1].decode().removeprefix("data: "))
    assert (last["message_type"], last["error_type"]) == ("error_message", "stream_interrupted")
    assert "GET /v1/runs/" in last["message"]


class LayerLostMidStream(LostLayer):
    """Redis restarts after the stream joined its groups: the next receive fails."""

    async def group_add(self, group: str, channel: str) -> None:
        return None


@pytest.mark.parametrize("layer", [LostLayer, LayerLostMidStream], ids=["lost-before-joining", "lost-mid-stream"])
async def test_a_lost_channel_layer_leaves_the_stream_running(cast, monkeypatch, layer):
    monkeypatch.setattr(stream_guard, "get_channel_layer", layer)

    async def body() -> AsyncIterator[bytes]:
        for n in range(3):
            yield f"data: {n}\n\n".encode()

    sent = await frames(guard_of(cast).guard(body()))

    assert sent == [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n"]
