"""Publishing engine events to every open tab of an agent: one function, one group per agent.

Rows are committed by the engine before their event exists, so publishing
never announces something a reader cannot load. Token deltas are coalesced
for a few milliseconds so they cross the channel layer a few per frame.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from channels.layers import get_channel_layer

from agents.engine.events import (
    MessageEvent,
    ReasoningDeltaEvent,
    RunFinishedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agents.engine.stop import StopReason
from agents.wire import approval_request, chat_row, public_id

if TYPE_CHECKING:
    from agents.engine.events import EngineEvent

COALESCE_SECONDS = 0.015


def agent_group(agent_id: Any) -> str:
    return f"agent.{agent_id}"


def event_payload(event: EngineEvent) -> dict[str, Any]:
    """The JSON an engine event travels as (to browsers and across processes)."""
    # "seq_from".."seq" is the range of engine events a payload covers (merged deltas cover several).
    base = {"type": event.type, "run_id": public_id("run", event.run_id), "seq_from": event.seq, "seq": event.seq}
    if isinstance(event, MessageEvent):
        return base | chat_row(event.message) | {"streamed": event.streamed}
    if isinstance(event, RunFinishedEvent):
        return base | {
            "stop_reason": event.stop_reason,
            "status": StopReason(event.stop_reason).run_status,
            "usage": asdict(event.usage),
            "error": event.error,
            "pending_approval": approval_request(event.awaiting_approval),
        }
    fields = {k: v for k, v in asdict(event).items() if k not in ("run_id", "seq", "type")}
    fields["message_id"] = public_id("message", fields["message_id"])
    fields["step_id"] = public_id("step", fields.get("step_id"))
    return base | fields


async def publish(agent_id: Any, payloads: list[dict[str, Any]]) -> None:
    """The only sender to an agent's group."""
    layer = get_channel_layer()
    if layer is None or not payloads:
        return
    await layer.group_send(agent_group(agent_id), {"type": "agent.events", "events": payloads})


class EventPublisher:
    """Publishes a run's events in order, merging runs of token deltas of the same part."""

    def __init__(self, *, agent_id: Any) -> None:
        self.agent_id = agent_id
        self._pending: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()

    async def publish(self, event: EngineEvent) -> None:
        payload = event_payload(event)
        if isinstance(event, ReasoningDeltaEvent | TextDeltaEvent | ToolCallDeltaEvent):
            self._merge(payload)
            if self._timer is None:
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(COALESCE_SECONDS, lambda: loop.create_task(self.flush()))
            return
        self._pending.append(payload)
        await self.flush()

    def _merge(self, payload: dict[str, Any]) -> None:
        last = self._pending[-1] if self._pending else None
        same_part = (
            last is not None
            and last["type"] == payload["type"]
            and last["message_id"] == payload["message_id"]
            and last.get("index") == payload.get("index")
            and last.get("part_index") == payload.get("part_index")
            and not payload.get("signature")
        )
        if not same_part:
            self._pending.append(payload)
            return
        assert last is not None
        key = "arguments_delta" if payload["type"] == "tool_call_delta" else "text"
        last[key] = (last.get(key) or "") + (payload.get(key) or "")
        last["seq"] = payload["seq"]

    async def flush(self) -> None:
        async with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            pending, self._pending = self._pending, []
            await publish(self.agent_id, pending)
