from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.db import models, transaction
from django.db.models import Case, Exists, F, OuterRef, Q, Subquery, Value, When

from accounts.fields import EncryptedJSONField
from accounts.scoping import AuthoredModel, OrgScopedQuerySet, PublicIdModel
from agents.conversations.models import AgentHold as AgentHold
from agents.conversations.models import Conversation as Conversation
from agents.conversations.models import SeqRange as SeqRange
from agents.conversations.models import ThreadState
from agents.engine.stop import StopReason as EngineStopReason
from agents.engine.store import MessageSnapshot
from agents.memory.models import AgentArchive as AgentArchive
from agents.memory.models import AgentBlock as AgentBlock
from agents.memory.models import Archive as Archive
from agents.memory.models import Block as Block
from agents.memory.models import Passage as Passage

_T = TypeVar("_T")

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant. Use the tools you are given when they help, "
    "and say plainly when you cannot do something."
)


class AgentQuerySet(OrgScopedQuerySet):
    def hold(self, agent_id: Any, conversation_id: Any = None) -> AgentHold:
        """Take the thread's row lock until the caller's transaction ends (one query); call inside it.

        The thread is the agent's default one, or its conversation ``conversation_id`` (whose row
        is locked instead). Holding it serializes every writer between turns with the others and
        with starts of runs: the answer says whether the thread is busy (the busy rule,
        ``RunQuerySet.busy``), which ``seq`` values its next rows take, and where its window starts.
        """
        holders = self if conversation_id is None else Conversation.objects.filter(agent_id=agent_id)
        pk = agent_id if conversation_id is None else conversation_id
        thread: Any = OuterRef("pk") if conversation_id is not None else None
        agent_ref = OuterRef("pk") if conversation_id is None else OuterRef("agent_id")
        last_row = Message.objects.filter(agent_id=agent_ref, conversation_id=thread).order_by("-seq").values("seq")[:1]
        revision = "context_revision" if conversation_id is None else "agent__context_revision"
        busy, last_seq, start, summary, keep, context_revision = (
            holders.select_for_update(of=("self",))
            .filter(pk=pk)
            .annotate(busy=Exists(Run.objects.busy_with(agent_ref, thread)), last_seq=Subquery(last_row))
            .values_list("busy", "last_seq", "context_start_seq", "context_summary_seq", "context_keep_seq", revision)
            .get()
        )
        return AgentHold(
            busy=bool(busy),
            seqs=SeqRange(last_seq),
            context_start_seq=start,
            context_summary_seq=summary,
            context_keep_seq=keep,
            context_revision=context_revision,
        )


class Agent(AuthoredModel, PublicIdModel, ThreadState):
    id_prefix = "agent"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    system = models.TextField("system prompt", default=DEFAULT_SYSTEM_PROMPT, blank=True)
    model = models.CharField("model handle", max_length=200, help_text="provider/model, e.g. demo/echo-1")
    embedding = models.CharField("embedding handle", max_length=200, blank=True)

    temperature = models.FloatField(default=0.7)
    max_tokens = models.PositiveIntegerField(null=True, blank=True, default=8192)
    parallel_tool_calls = models.BooleanField(default=False)
    enable_reasoner = models.BooleanField(default=False)
    max_reasoning_tokens = models.PositiveIntegerField(default=0)
    reasoning_effort = models.CharField(max_length=20, blank=True)
    context_window = models.PositiveIntegerField(default=32_000)
    max_steps = models.PositiveIntegerField(default=50, help_text="Model calls allowed in one run.")
    approval_expiry_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="How long a tool call may wait for approval before it is denied; empty: the organization's default.",
    )

    tags = models.JSONField(default=list, blank=True)
    tool_rules = models.JSONField(
        default=list, blank=True, help_text="Letta tool rules (terminal, continue, child, required-before-exit)."
    )
    tool_env_vars = EncryptedJSONField(
        default=dict, blank=True, help_text="The only environment variables its source tools see (encrypted at rest)."
    )
    metadata = models.JSONField(default=dict, blank=True)
    compaction_settings = models.JSONField(
        default=dict, blank=True, help_text="Letta's compaction_settings as given (empty: Letta's defaults)."
    )
    # The default thread's window and lease (``ThreadState``); the admin may move the window's start.
    context_start_seq = models.BigIntegerField(default=0)
    # Bumped whenever one of the agent's stored rows changes in place (appends do not bump
    # it): with the window's seqs, the key of the rows agents/memory/window_cache.py keeps.
    context_revision = models.PositiveBigIntegerField(default=0, editable=False)
    # Bumped by the database (triggers on Postgres, migration 0018) whenever what a turn reads besides
    # its window changes: the agent's tools and their rows, its blocks and their links, its archival
    # passages, its folders' links, a deletion of its messages, its organization's providers. The key
    # under which agents/runs/setup_cache.py keeps those reads between turns.
    setup_revision = models.PositiveBigIntegerField(default=0, editable=False)

    tools = models.ManyToManyField("tools.Tool", through="tools.AgentTool", related_name="agents")

    objects = AgentQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["-created_at"]
        indexes: ClassVar = [models.Index(fields=["organization", "-created_at"])]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A whole-row save writes back every field as loaded; ``context_revision`` and ``setup_revision``
        # are bumped in the database by edits of the agent's rows meanwhile, so they are left to them.
        if not self._state.adding and kwargs.get("update_fields") is None and not kwargs.get("force_insert"):
            kwargs["update_fields"] = [
                field.name
                for field in self._meta.concrete_fields
                if not field.primary_key and field.name not in ("context_revision", "setup_revision")
            ]
        super().save(*args, **kwargs)

    @classmethod
    def bump_context_revision(cls, agent_ids: Any) -> None:
        """Mark the windows of these agents stale: one of their rows changed in place."""
        cls.objects.filter(pk__in=agent_ids).update(context_revision=F("context_revision") + 1)


class MessageRole(models.TextChoices):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    APPROVAL = "approval"


class MessageQuerySet(OrgScopedQuerySet):
    # Rows changed or removed in place make their agents' cached windows stale. The bump comes
    # after the change, in its transaction: a window read meanwhile is never older than its key.
    def update(self, **kwargs: Any) -> int:
        return self._bumping_revisions(super().update, **kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        return self._bumping_revisions(super().delete)

    def _bumping_revisions(self, change: Callable[..., _T], **kwargs: Any) -> _T:
        with transaction.atomic():
            agent_ids = list(self.order_by().values_list("agent_id", flat=True).distinct())
            result = change(**kwargs)
            Agent.bump_context_revision(agent_ids)
        return result

    def in_context(self, agent: Agent, conversation: Conversation | None = None) -> MessageQuerySet:
        """The rows the model sees in the thread (the agent's default one, or ``conversation``),
        in the order it sees them (the summary right after the system row)."""
        holder: Agent | Conversation = agent if conversation is None else conversation
        return self.in_window(
            agent.pk,
            conversation_id=None if conversation is None else conversation.pk,
            start=holder.context_start_seq,
            summary=holder.context_summary_seq,
            keep=holder.context_keep_seq,
        )

    def in_thread(self, agent_id: Any, conversation_id: Any = None) -> MessageQuerySet:
        """The rows of one thread: the agent's default one, or its conversation ``conversation_id``."""
        if conversation_id is None:
            return self.filter(agent_id=agent_id, conversation__isnull=True)
        return self.filter(agent_id=agent_id, conversation_id=conversation_id)

    def in_window(
        self, agent_id: Any, *, conversation_id: Any = None, start: int, summary: int | None, keep: int | None
    ) -> MessageQuerySet:
        thread = self.in_thread(agent_id, conversation_id)
        rows = thread.filter(seq__gte=start)
        if summary is None or keep is None:
            return rows.order_by("seq")
        # An older summary is history, not context: only the latest one heads the window.
        older_summaries = thread.filter(seq__gte=keep, metadata__kind="summary").exclude(seq=summary)
        rows = rows.filter(Q(seq=start) | Q(seq=summary) | Q(seq__gte=keep)).exclude(
            seq__in=older_summaries.values("seq")
        )
        position = Case(When(seq=summary, then=Value(2 * start + 1)), default=F("seq") * 2)
        return rows.annotate(context_position=position).order_by("context_position")


class Message(PublicIdModel):
    """One durable row of a conversation; the wire shows it as one or more LettaMessages.

    ``content`` holds typed parts: ``{"type": "text", "text"}``,
    ``{"type": "reasoning", "text", "signature"}``, ``{"type": "redacted_reasoning", "data"}``.
    An assistant row's ``tool_calls`` are ``{"id", "name", "arguments", "requires_approval"}``;
    a tool row's ``tool_returns`` are ``{"tool_call_id", "name", "status", "tool_return",
    "func_response", "stdout", "stderr"}`` and its ``images`` the images its calls returned,
    ``{"tool_call_id", "mime_type", "data"}`` (base64; the wire never shows them, models that take
    images read them); an approval row's ``approvals`` are Letta's ``ApprovalReturn``/``ToolReturn`` items.
    """

    id_prefix = "message"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="messages")
    seq = models.BigIntegerField()
    role = models.CharField(max_length=10, choices=MessageRole.choices)
    content = models.JSONField(default=list, blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    tool_returns = models.JSONField(default=list, blank=True)
    images = models.JSONField(default=list, blank=True)
    approvals = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    otid = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=200, blank=True)
    run = models.ForeignKey("Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="messages")
    # The thread of the row: a conversation's, or (empty) the agent's default thread. ``seq`` counts per thread.
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, null=True, blank=True, related_name="messages"
    )
    step = models.ForeignKey("Step", on_delete=models.SET_NULL, null=True, blank=True, related_name="messages")
    is_err = models.BooleanField(default=False)
    sender_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    sender_api_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["agent", "seq"]
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["agent", "seq"],
                condition=Q(conversation__isnull=True),
                name="unique_message_seq_per_agent",
            ),
            models.UniqueConstraint(
                fields=["conversation", "seq"],
                condition=Q(conversation__isnull=False),
                name="unique_message_seq_per_conversation",
            ),
        ]
        indexes: ClassVar = [
            models.Index(fields=["agent", "otid"], name="message_agent_otid"),
            models.Index(fields=["run", "seq"], name="message_run_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.role} #{self.seq}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._state.adding:  # a new row: an append, which windows notice by its seq
            super().save(*args, **kwargs)
            return
        with transaction.atomic():
            super().save(*args, **kwargs)
            Agent.bump_context_revision([self.agent_id])

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        with transaction.atomic():
            deleted = super().delete(*args, **kwargs)
            Agent.bump_context_revision([self.agent_id])
        return deleted

    def snapshot(self) -> MessageSnapshot:
        """This row as the engine reads it (a plain, frozen value)."""
        return MessageSnapshot(
            id=self.id,
            agent_id=self.agent_id,
            seq=self.seq,
            role=self.role,  # type: ignore[arg-type]
            content=self.content,
            tool_calls=self.tool_calls,
            tool_returns=self.tool_returns,
            approvals=self.approvals,
            metadata=self.metadata,
            otid=self.otid,
            name=self.name,
            images=self.images,
            run_id=self.run_id,
            step_id=self.step_id,
            is_err=self.is_err,
            created_at=self.created_at,
            conversation_id=self.conversation_id,
        )


class ApprovalDecision(Message):
    """The approval rows seen as decisions, for the admin's read-only audit view.

    A proxy: the decisions live on the rows (``Message.approvals``), the one source of truth;
    the admin shows only rows of role ``approval``.
    """

    class Meta:
        proxy = True
        verbose_name = "approval decision"

    def __str__(self) -> str:
        return f"decisions #{self.seq} of {self.agent}"


class RunStatus(models.TextChoices):
    """A run's status: the one list of them. ``ACTIVE`` are the statuses of a run not ended yet."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @classmethod
    def is_active(cls, status: str) -> bool:
        """Whether a run in ``status`` has not ended yet (it makes its agent busy)."""
        return status in ACTIVE_RUN_STATUSES

    @classmethod
    def from_letta(cls, name: str) -> str:
        """The stored status of one of Letta's status names (``LETTA_RUN_STATUS``); others are kept."""
        return next((status for status, letta in LETTA_RUN_STATUS.items() if letta == name), name)


ACTIVE_RUN_STATUSES = frozenset({RunStatus.QUEUED, RunStatus.RUNNING})
# Letta's name of each status: a run that has not started yet is "created".
LETTA_RUN_STATUS: dict[str, str] = {
    status.value: "created" if status == RunStatus.QUEUED else status.value for status in RunStatus
}


# The engine's closed enum as model choices (same names, values and labels as before).
# django-stubs types only the functional API's one-string form (``TextChoices("Name", "A B")``).
StopReason = models.TextChoices("StopReason", [(reason.name, reason.value) for reason in EngineStopReason])  # type: ignore[call-overload]


class RunTransport(models.TextChoices):
    """How a run was asked for; recorded with the approval decisions it carries (the audit)."""

    API = "api", "REST API"
    CHAT = "chat", "Browser chat"
    EXPIRY = "expiry", "Approval expiry"


class RunQuerySet(OrgScopedQuerySet):
    def active(self) -> RunQuerySet:
        """Runs not ended yet (``ACTIVE_RUN_STATUSES``)."""
        return self.filter(status__in=ACTIVE_RUN_STATUSES)

    def busy_with(self, agent_id: Any, conversation_id: Any = None) -> RunQuerySet:
        """The runs that make a thread busy: its active ones (the ids may be ``OuterRef``s).

        The busy rule (DESIGN §14), the one definition: while a thread (the agent's default
        one, or its conversation ``conversation_id``) has a queued or running run, no other
        run starts on it and nothing else writes its rows (a reset, a summary). Two threads
        of one agent run at once; the blocks they share have one writer each
        (``agents.memory.services``). The turn lease (``agents.runs.state``) is how the
        executing turn holds its thread, not a second rule: only an active run holds it.
        """
        return self.filter(agent_id=agent_id, conversation_id=conversation_id).active()

    def busy(self, agent_id: Any, conversation_id: Any = None) -> bool:
        return self.busy_with(agent_id, conversation_id).exists()

    async def abusy(self, agent_id: Any, conversation_id: Any = None) -> bool:
        return await self.busy_with(agent_id, conversation_id).aexists()


class Run(PublicIdModel):
    id_prefix = "run"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="runs")
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, null=True, blank=True, related_name="runs", help_text="Empty: default."
    )
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    stop_reason = models.CharField(max_length=30, choices=StopReason.choices, blank=True)
    background = models.BooleanField(default=False, help_text="Executed by a worker, not in the request.")
    transport = models.CharField(max_length=10, choices=RunTransport.choices, default=RunTransport.API)
    request = models.JSONField(default=dict, blank=True, help_text="The input that started the run.")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    total_tokens = models.PositiveIntegerField(default=0)
    step_count = models.PositiveIntegerField(default=0)
    error = models.JSONField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    api_key = models.ForeignKey("accounts.ApiKey", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    objects = RunQuerySet.as_manager()

    # Not a column: the thread as the request that created this run (running, with its lease) read it
    # under the thread's row lock (``agents.runs.start``); its turn opens from it without reading again.
    opened_from: AgentHold | None = None
    # Not a column either: what its turn reads besides the window, read under that lock too
    # (``agents.runs.turns.prefetch``).
    prefetched: Any = None

    class Meta:
        ordering: ClassVar = ["-created_at"]
        indexes: ClassVar = [
            models.Index(fields=["agent", "-created_at"], name="run_agent_created"),
            models.Index(fields=["status", "heartbeat_at"], name="run_status_heartbeat"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.status})"

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        with transaction.atomic():
            deleted = super().delete(*args, **kwargs)
            # Its messages lost their run (and steps) in place: ``on_delete=SET_NULL``.
            Agent.bump_context_revision([self.agent_id])
        return deleted

    @property
    def is_active(self) -> bool:
        return RunStatus.is_active(self.status)

    @property
    def duration_ms(self) -> int | None:
        if self.started_at and self.completed_at:
            return int((self.completed_at - self.started_at).total_seconds() * 1000)
        return None


class StepStatus(models.TextChoices):
    PENDING = "pending"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Step(PublicIdModel):
    """One model call within a run, and the tool calls it led to."""

    id_prefix = "step"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="steps")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    number = models.PositiveIntegerField(help_text="1 for the run's first model call.")
    model = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=StepStatus.choices, default=StepStatus.PENDING)
    stop_reason = models.CharField(max_length=30, choices=StopReason.choices, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    total_tokens = models.PositiveIntegerField(default=0)
    reasoning_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0)
    usage_estimated = models.BooleanField(default=False, help_text="The provider gave no usage; these are estimates.")
    llm_ms = models.PositiveIntegerField(null=True, blank=True)
    tool_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    feedback = models.CharField(max_length=8, choices=[("positive", "positive"), ("negative", "negative")], blank=True)
    tags = models.JSONField(default=list, blank=True, help_text="Feedback tags.")
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["run", "number"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["run", "number"], name="unique_step_number_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} #{self.number}"
