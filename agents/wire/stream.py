"""A run's output as Letta stream chunks: the one encoder of every stream (inline, background, resumed).

The run's output is a list of LettaMessages: its rows' projections in ``seq`` order, input
rows left out, a compaction's summary counted as its ``event_message`` and ``summary_message``
(sent only when the request asked with ``include_compaction_messages``). Message ``i`` (from 1)
measures ``units``: a reasoning message its characters plus one for its signature, an assistant
message its characters, a tool call or approval request message one per call (its opening: the
name and id) plus the characters of its arguments; any other message goes whole. A chunk that
ends ``n`` units into message ``i`` has ``seq_id = i * SEQ_SCALE + n``; a chunk its row's commit
sends (a whole message, or the rest of one) ``i * SEQ_SCALE + WHOLE``. Every stream of a run numbers its chunks the same
way, so a client resumes after any chunk (``starting_after``), even mid-message, with nothing
lost or doubled.

Deltas preview the row being written in Letta's form: each chunk is a whole LettaMessage with
the row's id and the part's otid, carrying a piece of the text or of one call's arguments. A
delta goes out only where it continues what the client has, at a place in the row that is
known; the rest (a piece missed, a part that does not stream, calls whose place is unsure)
the row's commit completes. Where a previewed call turns out otherwise (an approval condition
that did not hold, arguments the loop rewrote), the commit sends its message whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, NotRequired, cast

from django.utils import timezone
from typing_extensions import TypedDict

from agents.engine.events import ReasoningDeltaEvent, TextDeltaEvent, ToolCallDeltaEvent
from agents.wire.messages import (
    ToolCall,
    assistant_message,
    calls_message,
    compaction_messages,
    letta_messages_for_row,
    reasoning_message,
    row_kind,
)
from agents.wire.values import StopReasonValue, part_otid, public_id

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from agents.engine.events import TurnUsage

SEQ_SCALE = 10_000_000
WHOLE = SEQ_SCALE - 1
INPUT_ROLES = frozenset({"user", "approval", "system"})
_TEXT_FIELDS = {"assistant_message": "content", "reasoning_message": "reasoning"}
_CALLS = frozenset({"tool_call_message", "approval_request_message"})

Chunk = dict[str, Any]
"""A LettaMessage with its ``seq_id``, or a stream's stop reason or usage."""
Delta = ReasoningDeltaEvent | TextDeltaEvent | ToolCallDeltaEvent


class LettaStopReason(TypedDict):
    message_type: Literal["stop_reason"]
    stop_reason: StopReasonValue


class LettaUsageStatistics(TypedDict):
    message_type: NotRequired[Literal["usage_statistics"]]
    """In streams; the blocking answer's ``usage`` leaves it out."""
    completion_tokens: int
    prompt_tokens: int
    total_tokens: int
    step_count: int
    run_ids: list[str] | None


class LettaPing(TypedDict):
    id: str
    message_type: Literal["ping"]


def stop_reason_json(stop_reason: str) -> LettaStopReason:
    return {"message_type": "stop_reason", "stop_reason": stop_reason}


def usage_json(usage: TurnUsage, run_ids: list[str] | None = None) -> LettaUsageStatistics:
    return {
        "message_type": "usage_statistics",
        "completion_tokens": usage.completion_tokens,
        "prompt_tokens": usage.prompt_tokens,
        "total_tokens": usage.total_tokens,
        "step_count": usage.step_count,
        "run_ids": run_ids,
    }


class OutputRow(NamedTuple):
    """A row of the run's output: its public id and LettaMessages (a summary's shown only when asked)."""

    id: str
    messages: list[Chunk]
    summary: bool = False


def output_row(row: Any) -> OutputRow | None:
    """What ``row`` adds to its run's output, or ``None`` for an input row (the user's message, an answer)."""
    row_id = public_id("message", row.id) or ""
    if row_kind(row) == "summary":
        return OutputRow(row_id, compaction_messages(row), summary=True)
    if row.role in INPUT_ROLES:
        return None
    return OutputRow(row_id, cast("list[Chunk]", letta_messages_for_row(row)))


def _units(message: Chunk) -> int | None:
    """How many units ``message`` measures, or ``None`` when it only goes whole."""
    kind = message["message_type"]
    if kind == "reasoning_message":
        return len(message["reasoning"]) + (1 if message.get("signature") else 0)
    if kind == "assistant_message":
        return len(message["content"])
    if kind in _CALLS:
        return sum(1 + len(call["arguments"] or "") for call in message["tool_calls"] or [])
    return None


@dataclass
class _PreviewRow:
    """The header fields of a row that is still being streamed."""

    id: Any
    step_id: Any
    run_id: Any
    created_at: datetime


@dataclass
class _Call:
    tool_call_id: str
    name: str
    arguments: str = ""


@dataclass
class _Sent:
    """What the client holds of one message: its type, its units and, for calls, the calls previewed."""

    kind: str
    units: int
    calls: list[_Call] | None = None


@dataclass
class _LiveRow:
    """The row being written, as its deltas lay it out: which message type holds each place."""

    started: datetime
    calls_unsure: bool
    """Its calls' deltas cannot be placed: some may have been missed, or they broke the layout."""
    kinds: dict[int, str] = field(default_factory=dict)
    content_parts: int = 0
    calls: dict[int, list[_Call]] = field(default_factory=dict)
    call_by_index: dict[int, tuple[int, _Call]] = field(default_factory=dict)


class StreamEncoder:
    """What one stream has sent of one run's output, and the chunks that come next.

    ``starting_after`` is the ``seq_id`` the client resumes after. ``continuous`` says the
    stream sees the run's events from here on with nothing missed (inline streams); a stream
    that joins a run midway (background, resumed) is continuous from the first commit it sees
    live on, until ``gap``.
    """

    def __init__(
        self,
        *,
        starting_after: int = 0,
        compaction_messages: bool = False,
        continuous: bool = True,
        message_types: Collection[str] | None = None,
    ):
        self.message_types = frozenset(message_types) if message_types is not None else None
        """``include_return_message_types``: only messages of these types are sent (``None``: all)."""
        self.resume_index, offset = divmod(starting_after, SEQ_SCALE)
        self.resume_offset = offset if starting_after else 0
        self.compaction_messages = compaction_messages
        self.continuous = continuous
        self.next_index = 1  # the index of the first message of the next row
        self._rows: dict[str, tuple[int, int]] = {}  # row id -> (index of its first message, count)
        self._sent: dict[int, _Sent] = {}
        self._live: dict[str, _LiveRow] = {}

    def gap(self) -> None:
        """Events were missed: what is being written now may lack pieces until the next commit."""
        self.continuous = False

    def _floor(self, index: int) -> int:
        """Units of message ``index`` the client already has."""
        if index < self.resume_index:
            return WHOLE
        had = self.resume_offset if index == self.resume_index else 0
        sent = self._sent.get(index)
        return max(had, sent.units if sent else 0)

    # --- committed rows -------------------------------------------------------------------

    def rows_committed(self, rows: Iterable[OutputRow], *, live: bool = False) -> list[Chunk]:
        """Chunks completing every message of ``rows`` (output rows, in order) that the client lacks;
        ``live`` when they come from the run's events (the stream is continuous from there)."""
        chunks: list[Chunk] = []
        for row in rows:
            if row.id not in self._rows:
                self._rows[row.id] = (self.next_index, len(row.messages))
                self.next_index += len(row.messages)
            first, _count = self._rows[row.id]
            self._live.pop(row.id, None)
            if row.summary and not self.compaction_messages:
                continue
            for offset, message in enumerate(row.messages):
                chunks += self._complete(first + offset, message)
        if live:
            self.continuous = True
        return self.shown(chunks)

    def shown(self, chunks: list[Chunk]) -> list[Chunk]:
        """The chunks of ``message_types`` (every chunk when it is ``None``)."""
        if self.message_types is None:
            return chunks
        return [chunk for chunk in chunks if chunk.get("message_type") in self.message_types]

    def _complete(self, index: int, message: Chunk) -> list[Chunk]:
        floor = self._floor(index)
        sent = self._sent.get(index)
        if floor == WHOLE and sent is not None and sent.kind != message["message_type"]:
            # A row committed again with its calls now waiting for a person (a tool asked for input).
            self._sent[index] = _Sent(message["message_type"], WHOLE)
            return [message | {"seq_id": index * SEQ_SCALE + WHOLE}]
        if floor == WHOLE:
            return []
        self._sent[index] = _Sent(message["message_type"], WHOLE)
        units = _units(message)
        if units is None or floor == 0 or (sent is not None and not _previewed(sent, message)):
            return [message | {"seq_id": index * SEQ_SCALE + WHOLE}]
        if floor >= units:
            return []
        if message["message_type"] in _CALLS:
            return _remaining_calls(index, message, floor)
        text_field = _TEXT_FIELDS[message["message_type"]]
        return [message | {text_field: message[text_field][floor:], "seq_id": index * SEQ_SCALE + WHOLE}]

    # --- deltas ---------------------------------------------------------------------------

    def delta(self, event: Delta) -> list[Chunk]:
        """The chunk previewing ``event`` (a delta of the row being written), if the client lacks it
        and its place is known (and its type is shown)."""
        return self.shown(self._delta(event))

    def _delta(self, event: Delta) -> list[Chunk]:
        row_id = public_id("message", event.message_id) or ""
        if row_id in self._rows:
            return []  # its row is committed: what it previews was completed already
        live = self._live.get(row_id)
        if live is None:
            # Joined midway, the stream may have missed calls of this row, unless it saw the row begin.
            from_start = isinstance(event, TextDeltaEvent | ReasoningDeltaEvent) and not event.part_index + event.offset
            live = self._live[row_id] = _LiveRow(timezone.now(), calls_unsure=not (self.continuous or from_start))
        row = _PreviewRow(id=event.message_id, step_id=event.step_id, run_id=event.run_id, created_at=live.started)
        if isinstance(event, ToolCallDeltaEvent):
            return self._call_delta(live, row, event)
        return self._text_delta(live, row, event)

    def _started_before(self, place: int) -> bool:
        """Whether the client has something of every message of the row before ``place``
        (a part that never streams, or one missed, holds back the deltas after it)."""
        return all(self._floor(self.next_index + earlier) > 0 for earlier in range(place))

    def _text_delta(self, live: _LiveRow, row: _PreviewRow, event: ReasoningDeltaEvent | TextDeltaEvent) -> list[Chunk]:
        kind = "reasoning_message" if isinstance(event, ReasoningDeltaEvent) else "assistant_message"
        place = event.part_index
        live.content_parts = max(live.content_parts, place + 1)
        if live.kinds.get(place, kind) != kind or not self._started_before(place):
            return []
        signature = event.signature if isinstance(event, ReasoningDeltaEvent) else None
        index = self.next_index + place
        start, end = event.offset, event.offset + len(event.text) + (1 if signature else 0)
        floor = self._floor(index)
        if end <= floor or start > floor:
            return []  # sent already, or a piece before it went missing: the row's commit completes it
        live.kinds[place] = kind
        self._sent[index] = _Sent(kind, end)
        text, otid = event.text[floor - start :], part_otid(event.message_id, place)
        if isinstance(event, ReasoningDeltaEvent):
            chunk: Chunk = dict(reasoning_message(row, otid, text, signature))
        else:
            chunk = dict(assistant_message(row, otid, text))
        return [chunk | {"seq_id": index * SEQ_SCALE + end}]

    def _call_place(self, live: _LiveRow, gated: bool) -> int | None:
        """Where the row's free (or gated) calls go: right after its content parts, the gated ones
        after the free ones; ``None`` when the deltas so far leave that unsure."""
        kind = "approval_request_message" if gated else "tool_call_message"
        claimed = {claimed_kind: place for place, claimed_kind in live.kinds.items()}
        if kind in claimed:
            return claimed[kind]
        if not gated and "approval_request_message" in claimed:
            return None  # a free call after a gated one: the gated ones move up at the commit
        place = live.content_parts + (1 if gated and "tool_call_message" in claimed else 0)
        return None if place in live.kinds else place

    def _call_delta(self, live: _LiveRow, row: _PreviewRow, event: ToolCallDeltaEvent) -> list[Chunk]:
        known = live.call_by_index.get(event.index)
        place = known[0] if known else self._call_place(live, event.requires_approval)
        calls = live.calls.get(place, []) if place is not None else []
        if (
            live.calls_unsure
            or place is None
            or any(later > place for later in live.kinds)  # a later message began: this one is complete
            or (known is not None and known[1] is not calls[-1])  # a call resumed after the next one began
            or not self._started_before(place)
        ):
            live.calls_unsure = True
            return []
        start = sum(1 + len(call.arguments) for call in calls)
        if known is None:
            call = _Call(event.tool_call_id or "", event.name or "")
            live.calls[place] = [*calls, call]
            live.call_by_index[event.index] = (place, call)
        else:
            call = known[1]
        fragment = event.arguments_delta or ""
        call.arguments += fragment
        kind = "approval_request_message" if event.requires_approval else "tool_call_message"
        live.kinds[place] = kind
        index = self.next_index + place
        opening = 0 if known else 1
        end = start + opening + len(fragment)
        floor = self._floor(index)
        if end <= floor or start > floor:
            return []
        self._sent[index] = _Sent(kind, end, live.calls[place])
        tool_call: ToolCall = {
            "name": call.name,
            "arguments": fragment[max(0, floor - start - opening) :] or None,
            "tool_call_id": call.tool_call_id,
        }
        otid = part_otid(event.message_id, place)
        chunk = calls_message(row, otid, gated=event.requires_approval, tool_call=tool_call, tool_calls=None)
        return [dict(chunk) | {"seq_id": index * SEQ_SCALE + end}]


def _previewed(sent: _Sent, message: Chunk) -> bool:
    """Whether what the client was sent of ``message`` is the start of it (the preview guessed right)."""
    if sent.kind != message["message_type"]:
        return False
    if sent.calls is None:
        return True
    calls = message["tool_calls"] or []
    return len(sent.calls) <= len(calls) and all(
        previewed.tool_call_id == call["tool_call_id"] and (call["arguments"] or "").startswith(previewed.arguments)
        for previewed, call in zip(sent.calls, calls, strict=False)
    )


def _remaining_calls(index: int, message: Chunk, floor: int) -> list[Chunk]:
    """The pieces of a calls message after ``floor`` units: the rest of the call it ends in, then each
    later call whole, in the form of its deltas."""
    chunks: list[Chunk] = []
    start = 0
    for call in message["tool_calls"] or []:
        arguments = call["arguments"] or ""
        end = start + 1 + len(arguments)
        if floor < end:
            piece = arguments if floor <= start else arguments[floor - start - 1 :]
            tool_call = {"name": call["name"], "arguments": piece or None, "tool_call_id": call["tool_call_id"]}
            chunks.append(message | {"tool_call": tool_call, "tool_calls": None, "seq_id": index * SEQ_SCALE + end})
        start = end
    if chunks:
        chunks[-1]["seq_id"] = index * SEQ_SCALE + WHOLE
    return chunks
