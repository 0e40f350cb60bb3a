"""What a turn reads besides its window, kept in this process between turns (issue 24).

Every turn of an agent read its provider, its tools and its memory section: three queries
and their rows made into objects, the same ones turn after turn. They change only when
one of their rows does, and on Postgres every such write bumps ``Agent.setup_revision`` in
its own transaction (triggers, whoever writes: migration ``agents.0018``). The start's
row-lock query reads the agent's row anyway, so a turn knows the revision for free, and
a read kept under that revision (with the agent's model and window start, which the
memory section also shows) is exactly what reading again would give.

A read is kept only when the revision covers it: the memory section of the agent's
default thread when no extra section (the folders') had rows, the provider's client
unless an organization chose its base URL (its host is checked again before each use).
Reads made after the revision was read can only be as new or newer, so a read kept
under it is never older than it. A change of settings (the server's provider keys) forgets
everything kept. Each agent is keyed by its id and its organization;
a process keeps the ``CONTEXT_CACHE_AGENTS`` agents used last. Without the triggers
(SQLite) nothing is kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connection

if TYPE_CHECKING:
    from agents.llm.base import LLMClient
    from agents.models import Agent
    from tools.base import ToolSpec


@dataclass(frozen=True)
class SetupKey:
    """What a kept read depends on, as the agent's row says it."""

    organization_id: Any
    revision: int
    model: str
    context_start_seq: int


@dataclass(frozen=True)
class Setup:
    """An agent's reads, kept: ``None`` where the revision does not cover the read (read it each turn)."""

    tools: tuple[ToolSpec, ...]
    llm: LLMClient | None
    memory: str | None


def setup_key(agent: Agent) -> SetupKey | None:
    """The key of ``agent``'s reads, as its row was read; ``None`` where nothing may be kept."""
    if connection.vendor != "postgresql":
        return None
    return SetupKey(
        organization_id=agent.organization_id,
        revision=agent.setup_revision,
        model=agent.model,
        context_start_seq=agent.context_start_seq,
    )


class SetupCache:
    """A bounded, thread-safe map from agent id to its last reads and their key."""

    def __init__(self, capacity: int | None = None) -> None:
        self._capacity = capacity
        self._setups: OrderedDict[Any, tuple[SetupKey, Setup]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, agent_id: Any, key: SetupKey) -> Setup | None:
        with self._lock:
            known = self._setups.get(agent_id)
            if known is None or known[0] != key:
                return None
            self._setups.move_to_end(agent_id)
            return known[1]

    def put(self, agent_id: Any, key: SetupKey, setup: Setup) -> None:
        capacity = self._capacity if self._capacity is not None else int(settings.CONTEXT_CACHE_AGENTS)
        with self._lock:
            self._setups[agent_id] = (key, setup)
            self._setups.move_to_end(agent_id)
            while len(self._setups) > capacity:
                self._setups.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._setups.clear()


setups = SetupCache()


def forget_on_settings_change(**kwargs: Any) -> None:
    """``setting_changed``'s receiver: a kept client may have been built from the settings before."""
    setups.clear()
