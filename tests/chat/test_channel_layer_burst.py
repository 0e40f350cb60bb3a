"""The channel layer's Redis pool takes a burst of tabs connecting at once (a restarted web process)."""

from __future__ import annotations

import asyncio
import uuid

from channels_redis.core import RedisChannelLayer
from django.conf import settings

from tests.support.live_chat import redis_test_url


async def test_three_hundred_tabs_joining_their_groups_at_once_all_get_in():
    layer = RedisChannelLayer(
        hosts=[{"address": redis_test_url(), **settings.CHANNEL_LAYER_HOST_OPTIONS}],
        prefix=f"burst-{uuid.uuid4().hex[:8]}",
    )
    channels = [await layer.new_channel() for _ in range(300)]
    try:
        await asyncio.gather(
            *(layer.group_add(f"agent-{index % 50}", channel) for index, channel in enumerate(channels))
        )
        await layer.group_send("agent-7", {"type": "agent.events", "events": []})

        received = await asyncio.wait_for(layer.receive(channels[7]), timeout=5)
    finally:
        await layer.flush()

    assert received["type"] == "agent.events"
