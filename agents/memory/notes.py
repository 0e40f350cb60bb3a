"""The notes a tool row shows for the memory edits its calls made ("Memory updated: human").

A successful call of one of the memory tools (``agents.memory.tools.core.MEMORY_TOOLS``, the
one list of them) edited the block its arguments name. A tool row holds only the calls'
results, so the calls themselves are read from the assistant row they answer: in ``rows``
when it is there, else from the agent's rows just before the tool row.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agents.memory.tools.core import MEMORY_TOOLS
from agents.models import Message, MessageRole
from agents.wire.chat import MemoryEditNote, memory_edit_note

if TYPE_CHECKING:
    from collections.abc import Sequence

MEMORY_TOOL_NAMES = frozenset(tool.name for tool in MEMORY_TOOLS)
# A tool row answers the latest assistant row before it; a few more are read in case.
CALL_LOOKBACK_ROWS = 3


def edited_label(arguments: Any) -> str | None:
    """The block a memory tool's call edits: its ``label``, or the ``memory`` tool's ``/memories/<label>`` path."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    named = arguments.get("label") or arguments.get("new_path") or arguments.get("path")
    label = str(named or "").removeprefix("/memories/").rstrip("/")
    return label or None


def _edited_call_ids(row: Any) -> list[str]:
    """The ids of a tool row's calls that succeeded with a memory tool."""
    if row.role != MessageRole.TOOL:
        return []
    return [
        item["tool_call_id"]
        for item in row.tool_returns or []
        if item.get("status") == "success" and item.get("name") in MEMORY_TOOL_NAMES
    ]


def _calls_before(row: Any) -> dict[str, dict[str, Any]]:
    thread = Message.objects.in_thread(row.agent_id, row.conversation_id)
    earlier = thread.filter(role=MessageRole.ASSISTANT, seq__lt=row.seq)
    assistants = earlier.order_by("-seq").only("tool_calls")[:CALL_LOOKBACK_ROWS]
    return {call["id"]: call for assistant in assistants for call in assistant.tool_calls or []}


def memory_edit_notes(rows: Sequence[Any]) -> dict[Any, list[MemoryEditNote]]:
    """The memory-edit notes of each tool row among ``rows`` (by row pk), one per block.

    Queries only for a tool row with a successful memory call whose assistant row is not in ``rows``.
    """
    calls = {call["id"]: call for row in rows for call in row.tool_calls or []}
    notes: dict[Any, list[MemoryEditNote]] = {}
    for row in rows:
        call_ids = _edited_call_ids(row)
        if not call_ids:
            continue
        if any(call_id not in calls for call_id in call_ids):
            calls |= _calls_before(row)
        labels = [edited_label(calls[call_id].get("arguments")) for call_id in call_ids if call_id in calls]
        unique = list(dict.fromkeys(label for label in labels if label))
        if unique:
            notes[row.id] = [memory_edit_note(label) for label in unique]
    return notes


def tool_row_notes(row: Any) -> list[MemoryEditNote]:
    """The memory-edit notes of one row (``memory_edit_notes``)."""
    return memory_edit_notes([row]).get(row.id, [])
