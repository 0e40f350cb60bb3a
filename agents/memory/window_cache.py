"""The rows of each agent's context window, kept in this process between turns.

Every turn reads its agent's whole window, and with a long conversation that read (rows,
JSON, snapshots) grows into most of the turn's cost (issue 15). Between two turns a window
changes in three ways only, and one indexed query of the agent row tells which:

- rows were appended: the agent's last ``seq`` moved on, so only the rows after the last one
  read are fetched (none when this process appended them: the turn adds its own rows, ``extend``);
- the window moved (a compaction, a reset): ``context_start_seq``, ``context_summary_seq`` or
  ``context_keep_seq`` changed, so the window is read again;
- a stored row changed in place (an edited system prompt, a batch's later tool results):
  ``Agent.context_revision`` was bumped (``MessageQuerySet.update`` and ``Message.save`` do it),
  so the window is read again.

So a process never serves a window that another process, or an operator, has changed. Only
the turn that holds the agent's lease reads a window, and reads are bounded by the last
``seq`` the same query saw, so a window is always one consistent cut of the agent's rows.
The cache holds the windows of the ``CONTEXT_CACHE_AGENTS`` agents used last.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from collections.abc import Callable

    from agents.engine.store import MessageSnapshot


@dataclass(frozen=True)
class WindowShape:
    """What the agent row says about its window; a cached window is valid for one shape."""

    start: int
    summary: int | None
    keep: int | None
    revision: int


@dataclass(frozen=True)
class _Window:
    shape: WindowShape
    last_seq: int
    rows: tuple[MessageSnapshot, ...]


class ContextWindows:
    """A bounded, thread-safe map from agent id to its last-read window."""

    def __init__(self, capacity: int | None = None) -> None:
        self._capacity = capacity
        self._windows: OrderedDict[Any, _Window] = OrderedDict()
        self._lock = threading.Lock()

    def rows(
        self,
        agent_id: Any,
        shape: WindowShape,
        last_seq: int | None,
        fetch: Callable[[int | None, int], list[MessageSnapshot]],
    ) -> list[MessageSnapshot]:
        """The window of ``shape`` through ``last_seq`` (the agent's last row), reading what is missing.

        ``fetch(after, through)`` reads the window's rows with ``after < seq <= through``
        (all of them through ``through`` when ``after`` is None).
        """
        if last_seq is None:
            self.forget(agent_id)
            return []
        with self._lock:
            known = self._windows.get(agent_id)
        if known is not None and known.shape == shape and known.last_seq <= last_seq:
            fresh = fetch(known.last_seq, last_seq) if known.last_seq < last_seq else []
            rows = (*known.rows, *fresh)
        else:
            rows = tuple(fetch(None, last_seq))
        self._remember(agent_id, _Window(shape=shape, last_seq=last_seq, rows=rows))
        return list(rows)

    def extend(self, agent_id: Any, shape: WindowShape, rows: list[MessageSnapshot]) -> None:
        """The lease holder appended ``rows`` (consecutive ``seq`` values, after every row it read): add
        them to the window it read, so the next turn in this process reads none of them again."""
        if not rows:
            return
        with self._lock:
            known = self._windows.get(agent_id)
            if known is None or known.shape != shape or known.last_seq != rows[0].seq - 1:
                return
            self._windows[agent_id] = _Window(shape=shape, last_seq=rows[-1].seq, rows=(*known.rows, *rows))

    def forget(self, agent_id: Any) -> None:
        with self._lock:
            self._windows.pop(agent_id, None)

    @property
    def capacity(self) -> int:
        if self._capacity is not None:
            return self._capacity
        return int(settings.CONTEXT_CACHE_AGENTS)

    def _remember(self, agent_id: Any, window: _Window) -> None:
        capacity = self.capacity
        with self._lock:
            self._windows[agent_id] = window
            self._windows.move_to_end(agent_id)
            while len(self._windows) > capacity:
                self._windows.popitem(last=False)


context_windows = ContextWindows()
