"""The browser chat's projection: a row and a run as the chat page receives them.

The page renders these and decides nothing itself: a row says what it is (``kind``), the
summary a compaction left and the notes of the memory edits its calls made; a run says
whether it is still working and what the page should say about its end (``banner``). The
same shapes travel in history pages, syncs, accepted frames and live events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

from agents.engine.compaction import summary_from_text
from agents.engine.stop import StopReason
from agents.models import RunStatus
from agents.wire.messages import letta_messages_for_row, letta_timestamp, public_id, row_kind, row_text

if TYPE_CHECKING:
    from collections.abc import Sequence


class MemoryEditNote(TypedDict):
    """A memory edit one of a tool row's calls made: the block's label and the note the row shows."""

    label: str
    note: str


class Banner(TypedDict):
    """What the page says about a run's end: ``kind`` ``error`` or ``info``, and the button it offers."""

    kind: Literal["error", "info"]
    text: str
    action: Literal["retry", "continue"] | None


class RunUsage(TypedDict):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    step_count: int
    estimated: bool


class ChatRun(TypedDict):
    """A run as the chat shows it: ``active`` while it works; once ended, its ``banner`` (or none)
    and ``unsaved_note``, what a message cut off by its end says (or ``None``)."""

    id: str
    status: str
    stop_reason: str | None
    error: str | None
    usage: RunUsage
    active: bool
    banner: Banner | None
    unsaved_note: str | None


def memory_edit_note(label: str) -> MemoryEditNote:
    return {"label": label, "note": f"Memory updated: {label}"}


def run_banner(*, status: str, stop_reason: str | None, error: str | None) -> Banner | None:
    """The banner of a run that ended ``status`` for ``stop_reason``; ``None`` for an active run or a plain end."""
    if RunStatus.is_active(status):
        return None
    if status == RunStatus.FAILED:
        text = f"The run failed: {error or stop_reason or 'unknown error'}"
        return {"kind": "error", "text": text, "action": "retry"}
    if stop_reason == StopReason.MAX_STEPS:
        return {"kind": "info", "text": "The agent reached its step limit for this turn.", "action": "continue"}
    if stop_reason == StopReason.CANCELLED:
        return {"kind": "info", "text": "Stopped.", "action": None}
    return None


def chat_run(*, run_id: Any, status: str, stop_reason: str | None, error: str | None, usage: RunUsage) -> ChatRun:
    """A run's state as the chat receives it (``agents.chat.actions.run_summary`` from a ``Run``,
    ``agents.broadcast`` from the engine's verdict)."""
    cancelled = stop_reason == StopReason.CANCELLED
    return {
        "id": public_id("run", run_id) or "",
        "status": status,
        "stop_reason": stop_reason or None,
        "error": error or None,
        "usage": usage,
        "active": RunStatus.is_active(status),
        "banner": run_banner(status=status, stop_reason=stop_reason, error=error),
        "unsaved_note": "Stopped before this message was finished; it was not saved." if cancelled else None,
    }


def chat_row(row: Any, *, memory_edits: Sequence[MemoryEditNote] = ()) -> dict[str, Any]:
    """A row as the browser chat receives it, in history pages, syncs and live events alike.

    Besides Letta's messages, the row says when it was stored (``created_at``), who sent a
    user or approval row (``sender``: ``{"user": email}`` or ``{"api_key": prefix}``, as the
    engine recorded it, else ``null``), for an assistant row whose reasoning streamed, how
    long the model reasoned (``reasoning_ms``, else ``null``), for a compaction's summary
    row the summary (``summary``, else ``null``) and, for a tool row, the memory edits its
    calls made (``memory_edits``, from ``agents.memory.notes.memory_edit_notes``).
    """
    metadata = row.metadata or {}
    reasoning_ms = metadata.get("reasoning_ms")
    kind = row_kind(row)
    return {
        "row": {
            "id": public_id("message", row.id),
            "seq": row.seq,
            "role": row.role,
            "kind": kind,
            "created_at": letta_timestamp(getattr(row, "created_at", None)),
            "sender": metadata.get("sender") or None,
            "reasoning_ms": reasoning_ms if isinstance(reasoning_ms, int) else None,
            "summary": summary_from_text(row_text(row)) if kind == "summary" else None,
            "memory_edits": list(memory_edits),
        },
        "messages": letta_messages_for_row(row),
    }
