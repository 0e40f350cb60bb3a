"""A run's resumable stream (``POST /v1/runs/{id}/stream``, and ``background=true`` sends).

It reads the run's committed rows once, then follows the agent's live events on the
channel layer, token deltas included; it never polls. It re-reads the rows only
when it missed events (a gap in ``seq``), when a compaction's summary comes and when
the run ends, so what it sends always adds up to what was stored. The chunks and their
``seq_id`` (where a client may resume) come from ``agents.wire.stream.StreamEncoder``, as
for the inline stream.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from agents.api.streaming import keep_alive, sse_frame, sse_response
from agents.broadcast import agent_group
from agents.engine.events import ReasoningDeltaEvent, TextDeltaEvent, ToolCallDeltaEvent, TurnUsage
from agents.engine.state import missing_results
from agents.models import Message, MessageRole, Run, RunStatus
from agents.wire.stream import INPUT_ROLES, Delta, OutputRow, StreamEncoder, output_row, stop_reason_json, usage_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Collection, Iterator

    from django.http import StreamingHttpResponse

MAX_STREAM_SECONDS = 3600
FINISHED = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}
_DELTAS: dict[str, type[Delta]] = {
    "reasoning_delta": ReasoningDeltaEvent,
    "text_delta": TextDeltaEvent,
    "tool_call_delta": ToolCallDeltaEvent,
}


def _batch_running(run: Run, tool_row: Message) -> bool:
    """Whether ``tool_row`` still lacks results of its batch (its calls are running): its event brings it whole."""
    if run.status in FINISHED:
        return False
    asking = (
        Message.objects.in_thread(run.agent_id, run.conversation_id)
        .filter(seq__lt=tool_row.seq, role=MessageRole.ASSISTANT)
        .order_by("-seq")
        .first()
    )
    if asking is None:
        return False
    between = (
        Message.objects.in_thread(run.agent_id, run.conversation_id)
        .filter(seq__gte=asking.seq, seq__lte=tool_row.seq)
        .order_by("seq")
    )
    broken = missing_results([row.snapshot() for row in between])
    return broken is not None and broken[1] is not None and broken[1].id == tool_row.id


def _snapshot(run_pk: Any) -> tuple[Run, list[OutputRow]]:
    run = Run.objects.get(pk=run_pk)
    rows = list(Message.objects.for_org(run.organization_id).filter(run=run).order_by("seq"))
    if rows and rows[-1].role == MessageRole.TOOL and _batch_running(run, rows[-1]):
        rows.pop()
    return run, [output for row in rows if (output := output_row(row)) is not None]


def _usage(run: Run) -> TurnUsage:
    return TurnUsage(
        prompt_tokens=run.prompt_tokens,
        completion_tokens=run.completion_tokens,
        total_tokens=run.total_tokens,
        step_count=run.step_count,
    )


def _delta(payload: dict[str, Any]) -> Delta:
    """A delta payload (``agents.broadcast.event_payload``) as the engine event it carries."""
    event_class = _DELTAS[payload["type"]]
    fields: dict[str, Any] = {name: payload[name] for name in event_class.__dataclass_fields__ if name != "type"}
    return event_class(**fields)


def _ended(encoder: StreamEncoder, run: Run, rows: list[OutputRow]) -> Iterator[bytes]:
    """The frames that close the stream of an ended run: its rows not sent yet, its stop reason and usage."""
    for chunk in encoder.rows_committed(rows):
        yield sse_frame(chunk)
    yield sse_frame(stop_reason_json(run.stop_reason or "error"))
    yield sse_frame(usage_json(_usage(run), [run.public_id]))
    yield sse_frame("[DONE]")


async def run_stream(
    run: Run,
    *,
    starting_after: int,
    include_pings: bool,
    compaction_messages: bool = False,
    message_types: Collection[str] | None = None,
) -> AsyncIterator[bytes]:
    """The run's output as SSE from ``starting_after`` (a ``seq_id``) on, until the run ends."""
    encoder = StreamEncoder(
        starting_after=starting_after,
        compaction_messages=compaction_messages,
        continuous=False,
        message_types=message_types,
    )
    current, rows = await sync_to_async(_snapshot)(run.pk)
    if current.status in FINISHED:  # an ended run is its rows: no need of the channel layer
        for frame in _ended(encoder, current, rows):
            yield frame
        return
    layer = get_channel_layer()
    group = agent_group(run.agent_id, run.conversation_id)
    channel: str | None = None
    if layer is not None:
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
    run_id, last_seq = run.public_id, 0
    try:
        deadline = time.monotonic() + MAX_STREAM_SECONDS
        while time.monotonic() < deadline:
            current, rows = await sync_to_async(_snapshot)(run.pk)
            if current.status in FINISHED:
                for frame in _ended(encoder, current, rows):
                    yield frame
                return
            for chunk in encoder.rows_committed(rows):
                yield sse_frame(chunk)
            # Follow live events until the run ends or something was missed; then read the rows again.
            async for payload in _live_payloads(layer, channel, run_id, include_pings):
                if isinstance(payload, bytes):
                    yield payload
                    continue
                if payload["seq_from"] > last_seq + 1 and last_seq:
                    last_seq = payload["seq"]
                    encoder.gap()
                    break  # a gap: the rows say what it held
                last_seq = max(last_seq, payload["seq"])
                if payload["type"] == "run_finished":
                    break
                if payload["type"] == "message":
                    row = payload["row"]
                    if row["kind"] == "summary":
                        break  # the summary's messages come from its row (its stats are not in the event)
                    shown = [] if row["role"] in INPUT_ROLES else [OutputRow(row["id"], payload["messages"])]
                    chunks = encoder.rows_committed(shown, live=True)
                else:
                    chunks = encoder.delta(_delta(payload))
                for chunk in chunks:
                    yield sse_frame(chunk)
    finally:
        if layer is not None and channel is not None:
            await layer.group_discard(group, channel)


async def _live_payloads(
    layer: Any, channel: str | None, run_id: str, include_pings: bool
) -> AsyncIterator[dict[str, Any] | bytes]:
    """This run's payloads from the agent's group, with keep-alives on silence; ends on a stale wait."""
    if layer is None or channel is None:
        await asyncio.sleep(settings.SSE_KEEPALIVE_SECONDS)
        return
    while True:
        try:
            message = await asyncio.wait_for(layer.receive(channel), timeout=settings.SSE_KEEPALIVE_SECONDS)
        except TimeoutError:
            yield keep_alive(include_pings=include_pings)
            return  # re-read the rows: a run may end without its tabs hearing (a swept worker's verdict is announced)
        for payload in message.get("events", []):
            if payload.get("run_id") == run_id:
                yield payload


def run_stream_response(
    run: Run,
    *,
    starting_after: int = 0,
    include_pings: bool = False,
    compaction_messages: bool = False,
    message_types: Collection[str] | None = None,
) -> StreamingHttpResponse:
    body = run_stream(
        run,
        starting_after=starting_after,
        include_pings=include_pings,
        compaction_messages=compaction_messages,
        message_types=message_types,
    )
    return sse_response(body)
