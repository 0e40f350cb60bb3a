"""Conversations: named threads of one agent (Letta's ``conv-…``).

Imported by ``agents.models`` so Django registers them in the ``agents`` app. A conversation
owns its thread: its message rows (``Message.conversation``), its window pointers, its turn
lease and its compaction, exactly as an agent owns its default thread (the rows whose
``conversation`` is empty). Everything else (blocks, tools, rules, the system prompt, the model
defaults) stays on the agent and is shared by all of its threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from django.conf import settings
from django.db import models

from accounts.scoping import OrgScopedQuerySet, PublicIdModel


class SeqRange:
    """The ``seq`` values an agent's next rows take, in order: the one allocator of ``Message.seq``.

    ``seq`` orders one scope's rows (an agent's today). Only the holder of the scope allocates,
    so two writers never take one value: a writer between turns holds the agent's row lock for
    its transaction (``Agent.objects.hold``, which gives it its range); the turn holds the
    agent's lease (``agents.runs.state``) for its whole length, and builds its range once from
    the last ``seq`` its window read saw (``agents.runs.store``), so its appends cost no query.
    """

    def __init__(self, last_seq: int | None) -> None:
        self._next = 0 if last_seq is None else last_seq + 1

    @property
    def last(self) -> int | None:
        """The last value taken or read (``None``: the scope has no rows yet)."""
        return None if self._next == 0 else self._next - 1

    def take(self, count: int = 1) -> int:
        """The first of ``count`` consecutive new values."""
        first = self._next
        self._next += count
        return first


@dataclass(frozen=True)
class AgentHold:
    """What a writer holding an agent's row lock knows of it (``Agent.objects.hold``)."""

    busy: bool
    seqs: SeqRange
    context_start_seq: int
    context_summary_seq: int | None
    context_keep_seq: int | None
    context_revision: int = 0  # the agent's (``agents.memory.window_cache`` keys its windows on it)


class ConversationQuerySet(OrgScopedQuerySet):
    def live(self) -> ConversationQuerySet:
        """Conversations not deleted (a deleted one is hidden everywhere, as Letta's soft delete)."""
        return self.filter(deleted_at__isnull=True)


class ThreadState(models.Model):
    """A thread's window pointers and turn lease: the agent's default thread (``Agent``) and each
    ``Conversation`` keep the same ones for their own rows.

    The model's context window is the system row at ``context_start_seq``, then every later row;
    after a compaction, the summary row (``context_summary_seq``) and the rows from
    ``context_keep_seq``. One turn at a time: a lease taken with a conditional UPDATE, so it holds
    across processes and machines and expires if its holder crashes (``agents.runs.state`` takes,
    renews and releases it).
    """

    context_start_seq = models.BigIntegerField(default=0, editable=False)
    context_summary_seq = models.BigIntegerField(null=True, blank=True, editable=False)
    context_keep_seq = models.BigIntegerField(null=True, blank=True, editable=False)
    turn_lock_run_id = models.UUIDField(null=True, blank=True, editable=False)
    turn_lock_expires_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        abstract = True


class Conversation(PublicIdModel, ThreadState):
    id_prefix = "conv"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="conversations")
    summary = models.TextField(blank=True, help_text="Set by clients only.")
    description = models.TextField(blank=True)
    model = models.CharField(max_length=200, blank=True, help_text="A model handle overriding the agent's.")
    model_settings = models.JSONField(null=True, blank=True)
    isolated_blocks = models.ManyToManyField("agents.Block", blank=True, related_name="+")
    last_message_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    last_updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["-created_at"]
        indexes: ClassVar = [
            models.Index(fields=["organization", "-created_at"], name="conversation_org_created"),
            models.Index(fields=["agent", "-created_at"], name="conversation_agent_created"),
        ]

    def __str__(self) -> str:
        return self.public_id
