"""Reads of folders and files, each scoped to one organization: another organization's id is a 404."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack

from django.db.models import QuerySet, Sum

from accounts.scoping import Cursor, Order, page
from core.errors import NotFound
from folders.models import FileAgent, FileChunk, FileMetadata, Folder
from folders.wire import FileSize, FolderMetadata, FoldersMetadata

if TYPE_CHECKING:
    from accounts.models import Organization
    from accounts.scoping import OrgScopedQuerySet
    from agents.models import Agent


def folder_get(*, organization: Organization | None, folder_id: str) -> Folder:
    folder: Folder = Folder.objects.for_org(organization).get_public(
        folder_id, missing=f"Folder with id={folder_id} not found"
    )
    return folder


def folder_by_name(*, organization: Organization | None, name: str) -> Folder:
    folder = Folder.objects.for_org(organization).filter(name=name).first()
    if folder is None:
        raise NotFound(f"Folder with name={name} not found")
    return folder


def folder_list(
    *,
    organization: Organization | None,
    name: str | None,
    **cursor: Unpack[Cursor],
) -> list[Folder]:
    rows = Folder.objects.for_org(organization)
    if name:
        rows = rows.filter(name=name)
    return page(rows, Folder, **cursor)


def folder_count(*, organization: Organization | None) -> int:
    return Folder.objects.for_org(organization).count()


def file_get(*, folder: Folder, file_id: str) -> FileMetadata:
    row: FileMetadata = folder_files(folder).get_public(
        file_id, missing=f"File with id={file_id} not found in folder {folder.public_id}"
    )
    return row


def file_get_for_org(*, organization: Organization | None, file_id: str) -> FileMetadata:
    rows = FileMetadata.objects.for_org(organization).select_related("folder")
    row: FileMetadata = rows.get_public(file_id, missing=f"File with id={file_id} not found")
    return row


def folder_files(folder: Folder) -> OrgScopedQuerySet:
    return FileMetadata.objects.for_org(folder.organization_id).filter(folder=folder).select_related("folder")


def file_list(*, folder: Folder, **cursor: Unpack[Cursor]) -> list[FileMetadata]:
    return page(folder_files(folder), FileMetadata, **cursor)


def organization_bytes(organization_id: Any) -> int:
    """What the organization's files take, in bytes (its upload limit counts against this)."""
    total = FileMetadata.objects.for_org(organization_id).aggregate(total=Sum("file_size"))["total"]
    return int(total or 0)


def agent_folders(agent: Agent) -> QuerySet[Folder]:
    return Folder.objects.for_org(agent.organization_id).filter(agent_links__agent=agent)


def agent_folder_list(*, agent: Agent, **cursor: Unpack[Cursor]) -> list[Folder]:
    """One page of the agent's folders (the 1.x pager asks again with ``after`` until a page comes back empty)."""
    return page(agent_folders(agent), Folder, **cursor)


def folder_agent_ids(folder: Folder) -> list[str]:
    return [f"agent-{pk}" for pk in folder.agent_links.order_by("-created_at").values_list("agent_id", flat=True)]


def agent_files(agent: Agent) -> QuerySet[FileAgent]:
    return FileAgent.objects.for_org(agent.organization_id).filter(agent=agent).select_related("folder", "file")


def agent_file_page(
    *, agent: Agent, is_open: bool | None, after: str | None, before: str | None, limit: int, order: Order
) -> tuple[list[FileAgent], bool]:
    """One page of the agent's files, and whether more follow."""
    rows = agent_files(agent)
    if is_open is not None:
        rows = rows.filter(is_open=is_open)
    found = page(rows, FileAgent, after=after, before=before, limit=limit + 1, order=order)
    return found[:limit], len(found) > limit


def agent_file_get(*, agent: Agent, file_id: str) -> FileMetadata:
    """A file of a folder attached to ``agent``."""
    rows = FileMetadata.objects.for_org(agent.organization_id).filter(folder__agent_links__agent=agent)
    row: FileMetadata = rows.select_related("folder").get_public(file_id, missing=f"File with id={file_id} not found")
    return row


def folder_chunks(*, folder: Folder, limit: int) -> list[FileChunk]:
    """The folder's chunks, newest file first, each file's in order."""
    rows = FileChunk.objects.for_org(folder.organization_id).filter(file__folder=folder).select_related("file")
    return list(rows.order_by("-file__created_at", "position")[:limit])


def folders_metadata(*, organization: Organization | None, detailed: bool) -> FoldersMetadata:
    """Letta's ``OrganizationSourcesStats``: counts and sizes per folder (each file listed when ``detailed``)."""
    sources: list[FolderMetadata] = []
    for folder in Folder.objects.for_org(organization).order_by("created_at"):
        files = list(folder_files(folder).only("id", "file_name", "file_size", "folder"))
        sizes: list[FileSize] = [
            {"file_id": file.public_id, "file_name": file.short_name, "file_size": file.file_size} for file in files
        ]
        sources.append(
            {
                "source_id": folder.public_id,
                "source_name": folder.name,
                "file_count": len(files),
                "total_size": sum(file.file_size for file in files),
                "files": sizes if detailed else [],
            }
        )
    return {
        "total_sources": len(sources),
        "total_files": sum(item["file_count"] for item in sources),
        "total_size": sum(item["total_size"] for item in sources),
        "sources": sources,
    }
