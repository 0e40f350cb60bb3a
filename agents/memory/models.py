"""Memory rows: core memory blocks shared by agents in order, and archival passages.

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


class Passage(PublicIdModel):
    """One memory in an agent's archival store; ``embedding`` is set when the agent has an embedding model."""

    id_prefix = "passage"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="passages")
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
        indexes: ClassVar = [models.Index(fields=["agent", "created_at"], name="passage_agent_created")]

    def __str__(self) -> str:
        return self.text[:60]
