"""A run's resumable stream (``POST /v1/runs/{id}/stream``, and ``background=true`` sends).

It reads the run's committed rows once, then follows the agent's live events on the
channel layer, token deltas included; it never polls. It re-reads the rows only
when it missed events (a gap in ``seq``) and when the run ends, so what it sends
always adds up to what was stored.

``seq_id`` says where a chunk ends, so a client can resume after any chunk, even in
the middle of a message, with nothing lost or doubled: the run's output is a list of
LettaMessages (its rows' projections, in order), and a chunk that ends ``n``
characters into message ``i`` has ``seq_id = i * SEQ_SCALE + n``; a message sent
whole (or its last piece) has ``i * SEQ_SCALE + WHOLE``. Reasoning and assistant
text stream by deltas; tool calls, tool returns and approval requests go whole.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from agents.api.streaming import (
    INPUT_ROLES,
    keep_alive,
    sse_frame,
    sse_response,
    stop_reason_json,
    text_delta_chunk,
    usage_json,
)
from agents.broadcast import agent_group
from agents.engine.events import TurnUsage
from agents.models import Message, Run, RunStatus
from agents.wire.messages import letta_messages_for_row, public_id

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from datetime import datetime

    from django.http import StreamingHttpResponse

SEQ_SCALE = 10_000_000
WHOLE = SEQ_SCALE - 1
MAX_STREAM_SECONDS = 3600
FINISHED = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}
_TEXT_FIELDS = {"assistant_message": "content", "reasoning_message": "reasoning"}


def _streamable_text(message: dict[str, Any]) -> str | None:
    """The text of a message that streams by deltas (reasoning, assistant text), else ``None``."""
    value = message.get(_TEXT_FIELDS.get(message["message_type"], ""))
    return value if isinstance(value, str) else None


class RunStreamState:
    """What one stream has sent of one run's output, by message index; pure bookkeeping."""

    def __init__(self, *, starting_after: int) -> None:
        self.resume_index, resume_offset = divmod(starting_after, SEQ_SCALE)
        self.resume_offset = resume_offset if starting_after else 0
        self.sent: dict[int, int] = {}  # message index -> characters sent (WHOLE once complete)
        self.rows: dict[str, tuple[int, int]] = {}  # row id -> (index of its first message, message count)
        self.next_index = 1  # the index of the first message of the next row (indices start at 1)

    def _floor(self, index: int) -> int:
        """Characters of message ``index`` the client already has."""
        if index < self.resume_index:
            return WHOLE
        had = self.resume_offset if index == self.resume_index else 0
        return max(had, self.sent.get(index, 0))

    def rows_committed(self, rows: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
        """Chunks completing every message of ``rows`` (output rows in order: id and LettaMessages)
        that the client lacks."""
        chunks: list[dict[str, Any]] = []
        for row_id, messages in rows:
            if row_id not in self.rows:
                self.rows[row_id] = (self.next_index, len(messages))
                self.next_index += len(messages)
            first, _count = self.rows[row_id]
            for offset, message in enumerate(messages):
                chunk = self._complete(first + offset, message)
                if chunk is not None:
                    chunks.append(chunk)
        return chunks

    def _complete(self, index: int, message: dict[str, Any]) -> dict[str, Any] | None:
        floor = self._floor(index)
        if floor == WHOLE:
            return None
        self.sent[index] = WHOLE
        text = _streamable_text(message)
        if text is None or floor == 0:
            return message | {"seq_id": index * SEQ_SCALE + WHOLE}
        if floor >= len(text):
            return None
        return message | {_TEXT_FIELDS[message["message_type"]]: text[floor:], "seq_id": index * SEQ_SCALE + WHOLE}

    def delta(self, payload: dict[str, Any], started: datetime) -> dict[str, Any] | None:
        """The chunk for a live reasoning or text delta of the row being written, if the client lacks it."""
        if payload["message_id"] in self.rows:
            return None  # its row is committed: what it previews was sent whole
        index = self.next_index + payload["part_index"]
        start, text = payload["offset"], payload["text"]
        end, floor = start + len(text), self._floor(index)
        if end <= floor or start > floor:
            # Sent already, or a piece before it went missing: the row's commit completes the message.
            return None
        self.sent[index] = end
        kind = "reasoning" if payload["type"] == "reasoning_delta" else "text"
        chunk = text_delta_chunk(
            kind,
            payload["message_id"],
            payload["step_id"],
            payload["run_id"],
            started,
            payload["part_index"],
            text[floor - start :],
            payload.get("signature"),
        )
        return chunk | {"seq_id": index * SEQ_SCALE + end}


def _snapshot(run_pk: Any) -> tuple[Run, list[tuple[str, list[dict[str, Any]]]]]:
    run = Run.objects.get(pk=run_pk)
    rows = list(
        Message.objects.for_org(run.organization_id).filter(run=run).exclude(role__in=INPUT_ROLES).order_by("seq")
    )
    if run.status not in FINISHED and rows and rows[-1].role == "tool":
        rows.pop()  # a running batch: its results are still being added; its event brings the row whole
    return run, [(public_id("message", row.id) or "", letta_messages_for_row(row)) for row in rows]


def _usage(run: Run) -> TurnUsage:
    return TurnUsage(
        prompt_tokens=run.prompt_tokens,
        completion_tokens=run.completion_tokens,
        total_tokens=run.total_tokens,
        step_count=run.step_count,
    )


async def run_stream(run: Run, *, starting_after: int, include_pings: bool) -> AsyncIterator[bytes]:
    """The run's output as SSE from ``starting_after`` (a ``seq_id``) on, until the run ends."""
    state = RunStreamState(starting_after=starting_after)
    layer = get_channel_layer()
    group = agent_group(run.agent_id)
    channel: str | None = None
    if layer is not None:
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
    run_id, last_seq, started = run.public_id, 0, timezone.now()
    try:
        deadline = time.monotonic() + MAX_STREAM_SECONDS
        while time.monotonic() < deadline:
            current, rows = await sync_to_async(_snapshot)(run.pk)
            for chunk in state.rows_committed(rows):
                yield sse_frame(chunk)
            if current.status in FINISHED:
                yield sse_frame(stop_reason_json(current.stop_reason or "error"))
                yield sse_frame(usage_json(_usage(current), [current.public_id]))
                yield sse_frame("[DONE]")
                return
            # Follow live events until the run ends or something was missed; then read the rows again.
            async for payload in _live_payloads(layer, channel, run_id, include_pings):
                if isinstance(payload, bytes):
                    yield payload
                    continue
                if payload["seq_from"] > last_seq + 1 and last_seq:
                    last_seq = payload["seq"]
                    break  # a gap: the rows say what it held
                last_seq = max(last_seq, payload["seq"])
                if payload["type"] == "run_finished":
                    break
                if payload["type"] == "message":
                    if payload["row"]["role"] not in INPUT_ROLES:
                        for chunk in state.rows_committed([(payload["row"]["id"], payload["messages"])]):
                            yield sse_frame(chunk)
                elif payload["type"] in ("reasoning_delta", "text_delta"):
                    delta = state.delta(payload, started)
                    if delta is not None:
                        yield sse_frame(delta)
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


def run_stream_response(run: Run, *, starting_after: int = 0, include_pings: bool = False) -> StreamingHttpResponse:
    return sse_response(run_stream(run, starting_after=starting_after, include_pings=include_pings))
