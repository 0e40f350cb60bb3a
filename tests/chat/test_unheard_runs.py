"""A run nobody listens to (an SDK's blocking call) crosses the channel layer once, and its end is not measured."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer

from agents import broadcast
from agents.broadcast import RunAnnouncer, agent_group, announce_run_end, has_listeners
from agents.engine.events import RunFinishedEvent, TextDeltaEvent
from agents.engine.stop import StopReason
from tests.support.live_chat import redis_test_url
from tests.support.sockets import IN_MEMORY_LAYER


@pytest.fixture(autouse=True)
def _layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER


@pytest.fixture
def sends(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[dict[str, Any]]]]:
    """Every ``group_send`` of the layer: its group and the payloads it carried."""
    layer = get_channel_layer()
    sent: list[tuple[str, list[dict[str, Any]]]] = []
    original = layer.group_send

    async def recording(group: str, message: dict[str, Any]) -> None:
        sent.append((group, list(message.get("events", []))))
        await original(group, message)

    monkeypatch.setattr(layer, "group_send", recording)
    return sent


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The agents whose memory panel and context meter were measured for a run's end."""
    agents: list[Any] = []

    def run_end_payload(agent_id: Any, finished: RunFinishedEvent) -> dict[str, Any]:
        agents.append(agent_id)
        return broadcast.event_payload(finished) | {"memory": []}

    monkeypatch.setattr(broadcast, "_run_end_payload", run_end_payload)
    return agents


def text_deltas(run_id: Any, texts: list[str]) -> list[TextDeltaEvent]:
    message_id = uuid.uuid4()
    return [
        TextDeltaEvent(run_id=run_id, seq=seq, message_id=message_id, step_id=None, text=text)
        for seq, text in enumerate(texts, start=1)
    ]


async def test_a_run_nobody_listens_to_goes_out_in_one_batch_when_it_ends(sends, measured):
    agent_id, run_id = uuid.uuid4(), uuid.uuid4()

    async with RunAnnouncer(run_id=run_id, agent_id=agent_id) as announcer:
        for delta in text_deltas(run_id, ["Hel", "lo"]):
            await announcer.announce(delta)
            await announcer.flush()
        await announce_run_end(agent_id, RunFinishedEvent(run_id=run_id, seq=3, stop_reason=StopReason.END_TURN))
        assert sends == []

    [(group, payloads)] = sends
    assert group == agent_group(agent_id)
    assert [payload["type"] for payload in payloads] == ["text_delta", "run_finished"]
    assert payloads[0]["text"] == "Hello"
    assert "memory" not in payloads[1]
    assert measured == []


async def test_a_tab_that_joins_mid_run_gets_what_was_kept_at_the_next_look(monkeypatch, sends):
    monkeypatch.setattr(broadcast, "LISTENERS_RECHECK_SECONDS", 0)
    agent_id, run_id = uuid.uuid4(), uuid.uuid4()
    layer = get_channel_layer()
    first, second = text_deltas(run_id, ["Hel", "lo"])

    async with RunAnnouncer(run_id=run_id, agent_id=agent_id) as announcer:
        await announcer.announce(first)
        await announcer.flush()
        channel = await layer.new_channel()
        await layer.group_add(agent_group(agent_id), channel)
        await announcer.announce(second)
        await announcer.flush()

        message = await layer.receive(channel)

    assert [payload["text"] for payload in message["events"]] == ["Hello"]
    assert (message["events"][0]["seq_from"], message["events"][0]["seq"]) == (1, 2)


async def test_a_run_someone_listens_to_goes_out_event_by_event_and_its_end_is_measured(sends, measured):
    agent_id, run_id = uuid.uuid4(), uuid.uuid4()
    layer = get_channel_layer()
    await layer.group_add(agent_group(agent_id), await layer.new_channel())

    async with RunAnnouncer(run_id=run_id, agent_id=agent_id) as announcer:
        for delta in text_deltas(run_id, ["Hel", "lo"]):
            await announcer.announce(delta)
            await announcer.flush()
        await announce_run_end(agent_id, RunFinishedEvent(run_id=run_id, seq=3, stop_reason=StopReason.END_TURN))

    assert [len(payloads) for _, payloads in sends] == [1, 1, 1]
    assert measured == [agent_id]


@pytest.mark.django_db
async def test_an_approval_answer_goes_out_at_once_for_the_inbox_even_unheard(sends):
    agent_id, run_id = uuid.uuid4(), uuid.uuid4()
    event = text_deltas(run_id, ["ok"])[0]
    answer = {"type": "message", "seq_from": 1, "seq": 1, "messages": [{"message_type": "approval_response_message"}]}

    async with RunAnnouncer(run_id=run_id, agent_id=agent_id) as announcer:
        await announcer.announce(replace(event, seq=1), payload=answer)
        await announcer.flush()
        assert [payloads for group, payloads in sends if group == agent_group(agent_id)] == [[answer]]


async def test_the_redis_layer_tells_whether_an_agent_group_has_members(settings):
    prefix = f"listeners-{uuid.uuid4().hex[:8]}"
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": redis_test_url(), **settings.CHANNEL_LAYER_HOST_OPTIONS}],
                "prefix": prefix,
            },
        }
    }
    agent_id = uuid.uuid4()
    layer = get_channel_layer()
    assert isinstance(layer, RedisChannelLayer)
    try:
        before = await has_listeners(agent_id)
        channel = await layer.new_channel()
        await layer.group_add(agent_group(agent_id), channel)
        joined = await has_listeners(agent_id)
        await layer.group_discard(agent_group(agent_id), channel)
        left = await has_listeners(agent_id)
    finally:
        await layer.flush()

    assert (before, joined, left) == (False, True, False)
