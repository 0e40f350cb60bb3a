"""Folders attached to agents, and the files open in an agent's context (Letta's ``files_agents``).

Attaching a folder attaches the three file tools and opens its processed files, least recently
used closed beyond the agent's limit; detaching closes them and, with no folder left, detaches
the tools. Every open, grep hit and search hit refreshes ``last_accessed_at``, the LRU order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from agents.services import agent_attach_tool, agent_detach_tool
from folders.broadcast import announce_open_files
from folders.chunking import numbered_lines, visible_content
from folders.filetypes import is_code
from folders.models import FileAgent, FileMetadata, Folder, FolderAgent
from folders.wire import PanelFile, panel_file
from tools.services import builtin_tools_named

if TYPE_CHECKING:
    from collections.abc import Iterable

    from agents.models import Agent

FILE_TOOL_NAMES = ("open_files", "grep_files", "semantic_search_files")


@dataclass(frozen=True)
class FileLimits:
    max_files_open: int
    per_file_chars: int


def file_limits(agent: Agent) -> FileLimits:
    """Letta's defaults by context window (``calculate_file_defaults_based_on_context_window``)."""
    window = agent.context_window
    for ceiling, files, chars in ((8_000, 3, 5_000), (32_000, 5, 15_000), (128_000, 10, 25_000), (200_000, 10, 40_000)):
        if window <= ceiling:
            return FileLimits(files, chars)
    return FileLimits(15, 40_000) if window else FileLimits(5, 50_000)


def lines_of(file: FileMetadata) -> list[str]:
    return numbered_lines(file.content or "", keep_indent=is_code(file.original_file_name))


def _view(agent: Agent, file: FileMetadata, start: int | None, end: int | None) -> str:
    return visible_content(lines_of(file), start=start, end=end, limit=file_limits(agent).per_file_chars)


@transaction.atomic
def folder_attach(*, agent: Agent, folder: Folder) -> None:
    """Attach ``folder`` (idempotent), its file tools, and open its processed files."""
    FolderAgent.objects.get_or_create(folder=folder, agent=agent)
    for tool in builtin_tools_named(organization=agent.organization, names=FILE_TOOL_NAMES):
        agent_attach_tool(agent=agent, tool=tool)
    files = FileMetadata.objects.for_org(agent.organization_id).filter(folder=folder, content__isnull=False)
    for file in files.order_by("created_at"):
        file_open(agent=agent, file=file)


@transaction.atomic
def folder_detach(*, agent: Agent, folder: Folder) -> None:
    """Detach ``folder`` (idempotent): its files leave the agent's context; the last folder takes the tools."""
    FolderAgent.objects.filter(folder=folder, agent=agent).delete()
    FileAgent.objects.for_org(agent.organization_id).filter(agent=agent, folder=folder).delete()
    announce_open_files([agent.pk], panel_files)
    if not FolderAgent.objects.filter(agent=agent).exists():
        for tool in builtin_tools_named(organization=agent.organization, names=FILE_TOOL_NAMES):
            agent_detach_tool(agent=agent, tool=tool)


@transaction.atomic
def agent_set_folders(*, agent: Agent, folders: Iterable[Folder]) -> None:
    """Attach exactly ``folders`` to the agent (the agent form): new ones through ``folder_attach``,
    dropped ones through ``folder_detach``; folders that stay are left as they are (their open files too)."""
    wanted = {folder.pk: folder for folder in folders}
    current = set(FolderAgent.objects.filter(agent=agent).values_list("folder_id", flat=True))
    for folder in Folder.objects.for_org(agent.organization_id).filter(pk__in=current - set(wanted)):
        folder_detach(agent=agent, folder=folder)
    for pk, folder in wanted.items():
        if pk not in current:
            folder_attach(agent=agent, folder=folder)


def open_in_attached_agents(file: FileMetadata) -> None:
    """A newly parsed file opens in every agent its folder is attached to (as Letta does)."""
    for link in FolderAgent.objects.filter(folder_id=file.folder_id).select_related("agent"):
        file_open(agent=link.agent, file=file)


@transaction.atomic
def file_open(*, agent: Agent, file: FileMetadata, start: int | None = None, end: int | None = None) -> list[str]:
    """Open ``file`` in the agent's context at lines ``start``..``end``; the names closed to stay in the limit."""
    now = timezone.now()
    FileAgent.objects.update_or_create(
        agent=agent,
        file=file,
        defaults={
            "organization_id": agent.organization_id,
            "folder_id": file.folder_id,
            "file_name": file.file_name,
            "is_open": True,
            "start_line": start,
            "end_line": end,
            "visible_content": _view(agent, file, start, end),
            "last_accessed_at": now,
        },
    )
    announce_open_files([agent.pk], panel_files)
    return close_beyond_limit(agent, keep={file.pk})


def close_beyond_limit(agent: Agent, keep: Iterable[object] = ()) -> list[str]:
    """Close the least recently used open files past the agent's ``max_files_open``; their names."""
    limit = file_limits(agent).max_files_open
    kept = set(keep)
    open_rows = list(
        FileAgent.objects.for_org(agent.organization_id).filter(agent=agent, is_open=True).order_by("-last_accessed_at")
    )
    ranked = [row for row in open_rows if row.file_id in kept] + [row for row in open_rows if row.file_id not in kept]
    evicted = ranked[limit:]
    _close(evicted)
    return [row.file_name for row in evicted]


def _close(rows: Iterable[FileAgent]) -> None:
    rows = list(rows)
    if rows:
        FileAgent.objects.filter(pk__in=[row.pk for row in rows]).update(
            is_open=False, visible_content="", start_line=None, end_line=None
        )
        announce_open_files({row.agent_id for row in rows}, panel_files)


def file_close(*, agent: Agent, file: FileMetadata) -> None:
    _close(FileAgent.objects.for_org(agent.organization_id).filter(agent=agent, file=file))


def file_close_all(*, agent: Agent) -> list[str]:
    rows = list(FileAgent.objects.for_org(agent.organization_id).filter(agent=agent, is_open=True))
    _close(rows)
    return [row.file_name for row in rows]


def panel_files(agent: Agent) -> list[PanelFile]:
    """The files of the agent's folders for the chat's memory panel: open ones first, the most recently
    used on top (the LRU order the agent sees), then closed ones by name."""
    rows = FileAgent.objects.for_org(agent.organization_id).filter(agent=agent).select_related("folder", "file")
    ordered = sorted(
        rows, key=lambda row: (not row.is_open, -row.last_accessed_at.timestamp() if row.is_open else 0, row.file_name)
    )
    return [panel_file(row, total_lines=len(lines_of(row.file)) if row.is_open else None) for row in ordered]


def touch(agent_id: Any, file_ids: Iterable[Any]) -> None:
    """Grep and search hits count as use (the LRU order)."""
    FileAgent.objects.filter(agent_id=agent_id, file_id__in=list(file_ids)).update(last_accessed_at=timezone.now())
