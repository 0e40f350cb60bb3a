"""What the loop reads and writes, as plain values, and the store protocol it persists through.

The loop never imports the ORM: ``agents.runs.store.DjangoConversationStore``
implements ``ConversationStore`` on the models, tests may use it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agents.llm.base import Derived, Usage

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agents.engine.events import RunFinishedEvent
    from agents.engine.types import StoredApprovalItem, StoredToolCall, StoredToolImage, StoredToolReturn
    from tools.base import StagedWrite

Role = Literal["system", "user", "assistant", "tool", "approval"]


@dataclass(frozen=True)
class MessageSnapshot(Derived):
    """A persisted ``Message`` row, with the same attribute names as the model; the model's view of
    it is derived once (``derive``), as the window cache hands the same rows to every turn."""

    id: Any
    agent_id: Any
    seq: int
    role: Role
    content: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[StoredToolCall] = field(default_factory=list)
    tool_returns: list[StoredToolReturn] = field(default_factory=list)
    approvals: list[StoredApprovalItem] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    otid: str = ""
    name: str = ""
    images: list[StoredToolImage] = field(default_factory=list, repr=False)
    run_id: Any = None
    step_id: Any = None
    is_err: bool = False
    created_at: datetime | None = None
    conversation_id: Any = None  # the row's thread: a conversation, or None for the agent's default one

    @property
    def public_id(self) -> str:
        return f"message-{self.id}"

    @property
    def text(self) -> str:
        return "".join(part.get("text", "") for part in self.content if part.get("type") == "text")


@dataclass(frozen=True)
class MessageDraft:
    """A row to persist; the store assigns ``seq`` (and ``id`` unless given)."""

    role: Role
    content: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[StoredToolCall] = field(default_factory=list)
    tool_returns: list[StoredToolReturn] = field(default_factory=list)
    approvals: list[StoredApprovalItem] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    otid: str = ""
    name: str = ""
    images: list[StoredToolImage] = field(default_factory=list, repr=False)
    step_id: Any = None
    is_err: bool = False
    id: Any = None


@dataclass(frozen=True)
class StepRecord:
    """What a finished (or failed) step reports for its ``Step`` row."""

    status: Literal["success", "failed", "cancelled"]
    usage: Usage = field(default_factory=Usage)
    llm_ms: int | None = None
    tool_ms: int | None = None
    stop_reason: str = ""
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunEnd:
    """How a run ends, recorded with the turn's last rows (``ConversationStore.end_with``)."""

    stop_reason: str
    usage: Usage
    step_count: int
    error: str | None = None


class AgentBusyError(Exception):
    """Another turn holds this agent."""


class RunStopped(Exception):
    """The run was asked to stop (or has ended) before a write guarded by that check: nothing was written."""


class ConversationStore(Protocol):
    """Durable state of one agent's conversation, for one run."""

    agent_id: Any
    run_id: Any

    async def open_turn(self) -> list[MessageSnapshot]:
        """Take the agent for this run, or raise ``AgentBusyError``, and return its in-context rows
        in order (O(context), never the whole history). The lock is a lease: a crashed holder
        loses it when the lease runs out."""
        ...

    async def heartbeat(self, *, fresh: bool = False) -> bool:
        """Extend the lease (when due) and say whether the run has been asked to stop. A store may answer
        from a check it made a moment ago (a write guarded by it); ``fresh`` asks it to look again
        (time has passed since: the model is answering)."""
        ...

    async def release_turn_lock(self) -> None: ...

    async def find_by_otid(self, otid: str) -> MessageSnapshot | None: ...

    async def rows_after(self, seq: int, *, limit: int = 200) -> list[MessageSnapshot]: ...

    async def append(
        self, drafts: list[MessageDraft], *, write: StagedWrite | None = None, unless_stopped: bool = False
    ) -> list[MessageSnapshot]:
        """Persist rows in one transaction, in order, and return them. ``write`` (a tool's staged change,
        given the last row's id) commits in that transaction, or the rows are not stored either.
        ``unless_stopped``: raise ``RunStopped`` and store nothing if the run was asked to stop (the
        check is part of the write, and counts as a fresh ``heartbeat``)."""
        ...

    async def set_tool_returns(
        self,
        message_id: Any,
        tool_returns: list[StoredToolReturn],
        *,
        write: StagedWrite | None = None,
        images: list[StoredToolImage] | None = None,
    ) -> MessageSnapshot:
        """Replace a tool row's results (and its images, unless ``images`` is ``None``); ``write`` commits
        in the same transaction, as in ``append``."""
        ...

    async def set_tool_calls(self, message_id: Any, tool_calls: list[StoredToolCall]) -> MessageSnapshot:
        """Replace an assistant row's calls (a call that came to wait for a person: ``tools.elicitation``)."""
        ...

    async def compact(
        self, *, summary: str, keep_from_seq: int, evicted: int, stats: dict[str, Any] | None = None
    ) -> list[MessageSnapshot]:
        """Store ``summary`` (the model's text) as the row that heads the context, start the context's rows at
        ``keep_from_seq``, and return the new in-context rows. Evicted rows stay in the history.
        ``stats`` is Letta's ``compaction_stats``, kept on the summary row."""
        ...

    async def finish_run(self, finished: RunFinishedEvent, usage: Usage) -> None:
        """Record how the run ended (``usage`` carries the token detail) and release the agent's lock;
        the end is announced once recorded, after the run's own events. Called once, before
        ``finished`` is yielded (and also when the turn's consumer stopped early)."""
        ...

    async def start_step(
        self, *, number: int, model: str, drafts: Sequence[MessageDraft] = ()
    ) -> tuple[Any, list[MessageSnapshot]] | None:
        """Record that step ``number`` starts, with the rows ``drafts`` (the turn's input, before its
        first step) in the same transaction; the step's id and the stored rows. ``None``, with nothing
        stored, when the run has been asked to stop (the check is part of the write)."""
        ...

    async def end_with(
        self,
        drafts: list[MessageDraft],
        *,
        step_id: Any,
        record: StepRecord,
        end: RunEnd,
        unless_stopped: bool = False,
    ) -> list[MessageSnapshot]:
        """Store the turn's last rows with its last step's end and the run's end, at once, and return
        the rows; ``finish_run`` then only announces the end. ``unless_stopped`` as in ``append``."""
        ...

    async def finish_step(self, step_id: Any, record: StepRecord) -> None:
        """How a step ended. The store may keep it for its next write (the next step's start, or the
        run's end, which records it in the same transaction)."""
        ...
