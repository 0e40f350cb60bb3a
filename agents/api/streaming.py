"""Server-sent events: the framing every stream shares, and a turn streamed while it executes inline.

Chunks come from ``agents.wire.stream.StreamEncoder``, the one encoder of every stream, so an
inline stream numbers its chunks (``seq_id``) exactly as the run's resumable stream
(``agents.api.run_stream``) does: a client that loses an inline stream resumes it there.
Input rows (the user's message, the approval answer) are not echoed.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.http import StreamingHttpResponse
from typing_extensions import TypedDict

from agents.engine.events import MessageEvent, RunFinishedEvent
from agents.runs.dispatch import run_in_background
from agents.wire.stream import StreamEncoder, output_row, stop_reason_json, usage_json

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Collection, Mapping

    from agents.runs.execute import RunExecution


class LettaStreamEvent(TypedDict):
    """One server-sent event: ``data:`` is a JSON LettaMessage (with its ``seq_id``), ``stop_reason``,
    ``usage_statistics`` or ``ping`` object; the last event's data is ``[DONE]``. Comments
    (``: keep-alive``) may come between events."""

    data: str


def sse_frame(payload: Mapping[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {data}\n\n".encode()


def keep_alive(*, include_pings: bool) -> bytes:
    """What a stream sends after ``SSE_KEEPALIVE_SECONDS`` of silence: Letta's ping event, or an SSE comment."""
    if include_pings:
        return sse_frame({"id": f"ping-{uuid.uuid4()}", "message_type": "ping"})
    return b": keep-alive\n\n"


def sse_response(body: AsyncIterator[bytes]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(body, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


async def _pump(execution: RunExecution, queue: asyncio.Queue[Any]) -> None:
    """Run the whole turn whatever happens to the client, so nothing persisted is lost and the lock is freed."""
    try:
        async for event in execution.events():
            await queue.put(event)
    finally:
        await queue.put(None)


async def inline_stream(
    execution: RunExecution,
    *,
    include_pings: bool,
    compaction_messages: bool = False,
    message_types: Collection[str] | None = None,
) -> AsyncIterator[bytes]:
    """The turn's events as SSE while it executes; the turn runs on if the client hangs up."""
    encoder = StreamEncoder(compaction_messages=compaction_messages, message_types=message_types)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    run_in_background(_pump(execution, queue))
    while True:
        try:
            event = await asyncio.wait_for(queue.get(), timeout=settings.SSE_KEEPALIVE_SECONDS)
        except TimeoutError:
            yield keep_alive(include_pings=include_pings)
            continue
        if event is None:
            break
        if isinstance(event, MessageEvent):
            row = output_row(event.message)
            chunks = encoder.rows_committed([row] if row else [], live=True)
        elif isinstance(event, RunFinishedEvent):
            chunks = [dict(stop_reason_json(event.stop_reason)), dict(usage_json(event.usage))]
        else:
            chunks = encoder.delta(event)
        for chunk in chunks:
            yield sse_frame(chunk)
    yield sse_frame("[DONE]")
