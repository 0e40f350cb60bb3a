"""What a run's announcer puts on the wire of the chat: merged deltas, each stamped."""

from __future__ import annotations

import time
import uuid

import pytest
from channels.layers import get_channel_layer

from agents.broadcast import RunAnnouncer, agent_group
from agents.engine.events import TextDeltaEvent
from tests.support.sockets import IN_MEMORY_LAYER


@pytest.fixture(autouse=True)
def _layer(settings):
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER


async def test_merged_deltas_travel_as_one_payload_stamped_when_their_first_token_was_emitted():
    agent_id, run_id, message_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(agent_group(agent_id), channel)
    announcer = RunAnnouncer(run_id=run_id, agent_id=agent_id)

    deltas = [
        TextDeltaEvent(run_id=run_id, seq=seq, message_id=message_id, step_id=None, text=text)
        for seq, text in enumerate(["Hel", "lo", "!"], start=1)
    ]
    before = time.time()
    await announcer.announce(deltas[0])
    first_emitted = time.time()
    for delta in deltas[1:]:
        await announcer.announce(delta)
    await announcer.flush()
    message = await layer.receive(channel)

    [payload] = message["events"]
    assert payload["text"] == "Hello!"
    assert (payload["seq_from"], payload["seq"]) == (1, 3)
    assert before <= payload["emitted_at"] <= first_emitted
