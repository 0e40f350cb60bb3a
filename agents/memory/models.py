"""Memory rows: core memory blocks shared by agents in order, archives and their passages.

An archive holds passages; agents search the archives attached to them (``AgentArchive``).
Each agent's own archival memory is the archive it owns (``AgentArchive.is_owner``), made on
its first insert (or by migration 0014 for passages stored before archives existed).

Imported by ``agents.models`` so Django registers them in the ``agents`` app.
"""

from __future__ import annotations

from typing import ClassVar

from django.db import models

from accounts.scoping import OrgScopedQuerySet, PublicIdModel

DEFAULT_BLOCK_CHAR_LIMIT = 20_000


class Block(PublicIdModel):
    """A labelled piece of core memory, compiled into the system prompt of every agent it is attached to."""

    id_prefix = "block"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=200)
    value = models.TextField(blank=True)
    limit = models.PositiveIntegerField(default=DEFAULT_BLOCK_CHAR_LIMIT, help_text="Most characters the value holds.")
    description = models.TextField(blank=True)
    read_only = models.BooleanField(default=False, help_text="The agent's tools may not edit it; the API still may.")
    metadata = models.JSONField(default=dict, blank=True)
    tags = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [models.Index(fields=["organization", "label"], name="block_org_label")]

    def __str__(self) -> str:
        return self.label


class AgentBlock(models.Model):
    """A block attached to an agent; ``position`` orders the blocks in the agent's prompt."""

    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="agent_blocks")
    block = models.ForeignKey(Block, on_delete=models.CASCADE, related_name="agent_blocks")
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["position", "id"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["agent", "block"], name="unique_block_per_agent"),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} · {self.block_id}"


class Archive(PublicIdModel):
    """A collection of passages that one or more agents search; ``embedding`` embeds its passages and queries."""

    id_prefix = "archive"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    embedding = models.CharField("embedding handle", max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey("accounts.User", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [models.Index(fields=["organization", "created_at"], name="archive_org_created")]

    def __str__(self) -> str:
        return self.name


class AgentArchive(models.Model):
    """An archive attached to an agent; ``is_owner`` marks the agent's own archival memory."""

    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="agent_archives")
    archive = models.ForeignKey(Archive, on_delete=models.CASCADE, related_name="agent_archives")
    is_owner = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["agent", "archive"], name="unique_archive_per_agent"),
            models.UniqueConstraint(
                fields=["agent"], condition=models.Q(is_owner=True), name="one_own_archive_per_agent"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.agent_id} · {self.archive_id}"


class Passage(PublicIdModel):
    """One memory in an archive; ``embedding`` is set when the archive's embedding model could run.

    ``agent`` is the agent whose archival memory holds it (it goes with the agent), empty for
    passages added to a shared archive through ``/v1/archives``.
    """

    id_prefix = "passage"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    archive = models.ForeignKey(Archive, on_delete=models.CASCADE, related_name="passages")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, null=True, blank=True, related_name="passages")
    text = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    embedding = models.JSONField(null=True, blank=True, help_text="A unit vector, or null.")
    embedding_model = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["created_at", "id"]
        indexes: ClassVar = [
            models.Index(fields=["agent", "created_at"], name="passage_agent_created"),
            models.Index(fields=["archive", "created_at"], name="passage_archive_created"),
        ]

    def __str__(self) -> str:
        return self.text[:60]
