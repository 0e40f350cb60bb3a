"""The rows of the filesystem: a ``Folder`` (Letta's source), its ``FileMetadata``, the chunks a file is
searched by (``FileChunk``), and ``FileAgent``: one file attached to one agent, open or closed.

A file's original bytes sit in ``FILES_STORAGE`` (Django's storage API) under a key made of the
organization's and the file's UUIDs; nothing serves them by URL.
"""

from __future__ import annotations

from django.db import models

from accounts.scoping import AuthoredModel, OrgScopedQuerySet, PublicIdModel


class ProcessingStatus(models.TextChoices):
    PENDING = "pending"
    PARSING = "parsing"
    EMBEDDING = "embedding"
    COMPLETED = "completed"
    ERROR = "error"


TERMINAL_STATUSES = frozenset({ProcessingStatus.COMPLETED, ProcessingStatus.ERROR})
# Letta's allowed moves (``S/file_manager.py``); any non-terminal status may also move to ``error``.
NEXT_STATUS = {
    ProcessingStatus.PENDING: ProcessingStatus.PARSING,
    ProcessingStatus.PARSING: ProcessingStatus.EMBEDDING,
    ProcessingStatus.EMBEDDING: ProcessingStatus.COMPLETED,
}


class Folder(AuthoredModel, PublicIdModel):
    id_prefix = "source"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="folders")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    instructions = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    embedding = models.CharField("embedding handle", max_length=200)
    embedding_chunk_size = models.PositiveIntegerField(default=300)
    agents = models.ManyToManyField("agents.Agent", related_name="folders", blank=True, through="FolderAgent")

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="folder_name_unique_per_org")]

    def __str__(self) -> str:
        return self.name


class FolderAgent(models.Model):
    """A folder attached to an agent (Letta's ``sources_agents``)."""

    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="agent_links")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="folder_links")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["folder", "agent"], name="folder_agent_unique")]

    def __str__(self) -> str:
        return f"{self.folder_id} → {self.agent_id}"


class FileMetadata(PublicIdModel):
    id_prefix = "file"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="files")
    file_name = models.CharField(max_length=500, help_text="'<folder>/<name>', as Letta stores it.")
    original_file_name = models.CharField(max_length=500)
    file_type = models.CharField(max_length=200)
    file_size = models.PositiveBigIntegerField(default=0)
    storage_key = models.CharField(max_length=500, blank=True, editable=False)
    processing_status = models.CharField(
        max_length=20, choices=ProcessingStatus.choices, default=ProcessingStatus.PENDING
    )
    error_message = models.TextField(blank=True)
    total_chunks = models.PositiveIntegerField(null=True, blank=True)
    chunks_embedded = models.PositiveIntegerField(null=True, blank=True)
    content = models.TextField(null=True, blank=True)  # noqa: DJ001 (null: not parsed; "" is never stored)
    processing_seconds = models.FloatField(null=True, blank=True, editable=False)
    # Set by the one delivery of its processing that claimed the file (a second delivery finds it set).
    processing_started_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["folder", "created_at"], name="file_folder_created")]

    def __str__(self) -> str:
        return self.file_name

    @property
    def short_name(self) -> str:
        """The name without its ``<folder>/`` prefix (what the list and retrieve routes show)."""
        prefix = f"{self.folder.name}/"
        return self.file_name.removeprefix(prefix)

    @property
    def is_terminal(self) -> bool:
        return self.processing_status in TERMINAL_STATUSES


class FileChunk(models.Model):
    """One passage of a file's text, with its embedding (a JSON list, as archival passages keep theirs)."""

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    file = models.ForeignKey(FileMetadata, on_delete=models.CASCADE, related_name="chunks")
    position = models.PositiveIntegerField()
    text = models.TextField()
    embedding = models.JSONField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["file", "position"], name="file_chunk_position_unique")]

    def __str__(self) -> str:
        return f"{self.file_id}#{self.position}"


class FileAgent(PublicIdModel):
    """A file in an agent's context (Letta's ``files_agents``): open with a window of its lines, or closed."""

    id_prefix = "file_agent"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="file_links")
    file = models.ForeignKey(FileMetadata, on_delete=models.CASCADE, related_name="agent_links")
    folder = models.ForeignKey(Folder, on_delete=models.CASCADE, related_name="+")
    file_name = models.CharField(max_length=500)
    is_open = models.BooleanField(default=True)
    start_line = models.PositiveIntegerField(null=True, blank=True)
    end_line = models.PositiveIntegerField(null=True, blank=True)
    visible_content = models.TextField(blank=True)
    last_accessed_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "file"], name="file_agent_unique")]
