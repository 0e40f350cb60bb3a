"""What an import keeps of an agent file beyond the agents: the parts this server does not run.

Letta's file may name MCP servers, folders with their files, groups and skills. They are not
dropped: each import keeps them (``AgentFileImport.kept``), each imported agent remembers its
place in the file (``ImportedAgent``), and an export of that agent writes them again.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models

from accounts.scoping import OrgScopedQuerySet, PublicIdModel


class AgentFileImport(PublicIdModel):
    """One accepted ``.af`` upload: what it created and what it kept without creating."""

    id_prefix = "agentfile_import"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    file_name = models.CharField(max_length=255, blank=True)
    kept = models.JSONField(
        default=dict, blank=True, help_text="The file's mcp_servers, sources, files, groups and skills, as given."
    )
    warnings = models.JSONField(default=list, blank=True, help_text="What the import changed or could not use.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["-created_at"]

    def __str__(self) -> str:
        return self.file_name or self.public_id


class ImportedAgent(models.Model):
    """An agent made by an import, with its file-local id and its links to the kept parts."""

    record = models.ForeignKey(AgentFileImport, on_delete=models.CASCADE, related_name="agents")
    agent = models.OneToOneField("agents.Agent", on_delete=models.CASCADE, related_name="agent_file")
    file_id = models.CharField(max_length=64, help_text="The agent's id in the file (agent-0).")
    source_ids = models.JSONField(default=list, blank=True, help_text="File-local ids of its folders.")
    files_agents = models.JSONField(default=list, blank=True, help_text="Its open files, as the file gave them.")

    def __str__(self) -> str:
        return f"{self.file_id} of {self.record}"
