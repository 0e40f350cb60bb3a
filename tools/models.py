from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models

from accounts.scoping import OrgScopedQuerySet, PublicIdModel

DEFAULT_RETURN_CHAR_LIMIT = 50_000


class ToolKind(models.TextChoices):
    SOURCE = "source", "Python source (sandboxed)"
    BUILTIN = "builtin", "Built-in server tool"
    CLIENT = "client", "Client-side (answered through approvals)"


class ToolQuerySet(OrgScopedQuerySet):
    pass


class Tool(PublicIdModel):
    id_prefix = "tool"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    json_schema = models.JSONField(default=dict, blank=True)
    args_json_schema = models.JSONField(
        null=True,
        blank=True,
        help_text="Parameters given by the client, used instead of those derived from the source.",
    )
    kind = models.CharField(max_length=10, choices=ToolKind.choices, default=ToolKind.SOURCE)
    tool_type = models.CharField(
        max_length=40, default="custom", help_text="Letta's tool_type on the wire (custom, letta_core, …)."
    )
    source_code = models.TextField(blank=True)
    source_type = models.CharField(max_length=20, default="python")
    default_requires_approval = models.BooleanField(default=False)
    return_char_limit = models.PositiveIntegerField(default=DEFAULT_RETURN_CHAR_LIMIT)
    enable_parallel_execution = models.BooleanField(default=False)
    tags = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ToolQuerySet.as_manager()

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["organization", "name"], name="unique_tool_name_per_org"),
        ]
        ordering: ClassVar = ["name"]

    def __str__(self) -> str:
        return self.name


class AgentToolQuerySet(models.QuerySet):
    def for_org(self, organization: object) -> AgentToolQuerySet:
        if organization is None:
            return self.none()
        return self.filter(agent__organization=organization)


class AgentTool(models.Model):
    """A tool attached to an agent, with the agent's own approval policy for it."""

    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="agent_tools")
    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="agent_tools")
    requires_approval = models.BooleanField(
        null=True, blank=True, help_text="Overrides the tool's default; empty means inherit."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AgentToolQuerySet.as_manager()

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["agent", "tool"], name="unique_agent_tool"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} on {self.agent}"

    @property
    def effective_requires_approval(self) -> bool:
        if self.requires_approval is None:
            return self.tool.default_requires_approval
        return self.requires_approval
