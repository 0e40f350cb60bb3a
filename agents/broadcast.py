"""Publishing engine events to every open tab of an agent: one function, one group per agent.

Rows are committed by the engine before their event exists, so publishing
never announces something a reader cannot load. Token deltas are coalesced
for a few milliseconds so they cross the channel layer a few per frame.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from agents.engine.events import (
    MessageEvent,
    ReasoningDeltaEvent,
    RunFinishedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
)
from agents.engine.stop import StopReason
from agents.models import Agent
from agents.wire.messages import approval_request, chat_row, public_id

if TYPE_CHECKING:
    from agents.engine.events import EngineEvent

COALESCE_SECONDS = 0.015


def agent_group(agent_id: Any) -> str:
    return f"agent.{agent_id}"


def approvals_group(organization_id: Any) -> str:
    """The group of every open page of an organization's members (the approvals inbox and badge)."""
    return f"org.{organization_id}.approvals"


def _changes_approvals(payload: dict[str, Any]) -> bool:
    """Whether a payload makes an approval request pending (a run stopped for one) or resolves one."""
    if payload["type"] == "run_finished":
        return payload.get("pending_approval") is not None
    if payload["type"] == "message":
        return any(m["message_type"] == "approval_response_message" for m in payload.get("messages", []))
    return False


def _organization_of(agent_id: Any) -> Any:
    return Agent.objects.filter(pk=agent_id).values_list("organization_id", flat=True).first()


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
    """The only sender to an agent's group, and to its organization's approvals group when an
    approval request becomes pending or is answered (the inbox reads the new state itself)."""
    layer = get_channel_layer()
    if layer is None or not payloads:
        return
    await layer.group_send(agent_group(agent_id), {"type": "agent.events", "events": payloads})
    if any(_changes_approvals(payload) for payload in payloads):
        organization_id = await sync_to_async(_organization_of)(agent_id)
        if organization_id is not None:
            await layer.group_send(
                approvals_group(organization_id),
                {"type": "approvals.changed", "agent_id": public_id("agent", agent_id)},
            )


class EventPublisher:
    """Publishes a run's events in order, merging runs of token deltas of the same part."""

    def __init__(self, *, agent_id: Any) -> None:
        self.agent_id = agent_id
        self._pending: list[dict[str, Any]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()

    async def publish(self, event: EngineEvent) -> None:
        payload = event_payload(event)
        # When the executor let the event go (Unix seconds; merged deltas keep their first's), so
        # a client can tell how long an event took to reach it (benchmarks/bench_chat_streams.py).
        payload["emitted_at"] = time.time()
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
