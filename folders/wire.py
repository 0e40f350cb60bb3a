"""The Letta projection of folders and files: rows in, typed dicts out (LETTA_PLATFORM §3)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from typing_extensions import TypedDict

from agents.wire.resources import EmbeddingConfig, embedding_config
from folders.models import FileAgent, FileChunk, FileMetadata, Folder


def _time(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment else None


class FolderJSON(TypedDict):
    id: str
    name: str
    description: str | None
    instructions: str | None
    metadata: dict[str, Any]
    embedding_config: EmbeddingConfig
    organization_id: str
    created_by_id: str | None
    last_updated_by_id: str | None
    created_at: str | None
    updated_at: str | None


class SourceJSON(FolderJSON):
    vector_db_provider: str


class FileJSON(TypedDict):
    id: str
    source_id: str
    file_name: str
    original_file_name: str
    file_path: str | None
    file_type: str
    file_size: int
    file_creation_date: str | None
    file_last_modified_date: str | None
    processing_status: str
    error_message: str | None
    total_chunks: int | None
    chunks_embedded: int | None
    content: str | None
    organization_id: str
    created_at: str | None
    updated_at: str | None


class AgentFileJSON(TypedDict):
    id: str
    file_id: str
    file_name: str
    folder_id: str
    folder_name: str
    is_open: bool
    last_accessed_at: str | None
    visible_content: str | None
    start_line: int | None
    end_line: int | None


class AgentFilesPage(TypedDict):
    files: list[AgentFileJSON]
    next_cursor: str | None
    has_more: bool


class FileClosed(TypedDict):
    message: str


class FileSize(TypedDict):
    file_id: str
    file_name: str
    file_size: int


class FolderMetadata(TypedDict):
    source_id: str
    source_name: str
    file_count: int
    total_size: int
    files: list[FileSize]


class FoldersMetadata(TypedDict):
    total_sources: int
    total_files: int
    total_size: int
    sources: list[FolderMetadata]


class FilePassage(TypedDict):
    """A file's chunk as Letta's ``Passage``."""

    id: str
    text: str
    file_id: str
    file_name: str
    source_id: str
    archive_id: str | None
    embedding: list[float] | None
    embedding_config: dict[str, Any] | None
    metadata: dict[str, Any]
    tags: list[str]
    organization_id: str
    created_at: str | None
    updated_at: str | None
    is_deleted: bool


def folder_json(folder: Folder) -> FolderJSON:
    config = embedding_config(folder.embedding)
    config["embedding_chunk_size"] = folder.embedding_chunk_size
    user = f"user-{folder.created_by_id}" if folder.created_by_id else None
    return {
        "id": folder.public_id,
        "name": folder.name,
        "description": folder.description or None,
        "instructions": folder.instructions or None,
        "metadata": folder.metadata or {},
        "embedding_config": config,
        "organization_id": f"org-{folder.organization_id}",
        "created_by_id": user,
        "last_updated_by_id": user,
        "created_at": _time(folder.created_at),
        "updated_at": _time(folder.updated_at),
    }


def source_json(folder: Folder) -> SourceJSON:
    return {**folder_json(folder), "vector_db_provider": "native"}


def file_json(file: FileMetadata, *, include_content: bool = False, full_name: bool = False) -> FileJSON:
    """``full_name``: the stored ``<folder>/<name>`` (the upload's answer); else the bare name (lists, retrieve)."""
    return {
        "id": file.public_id,
        "source_id": f"source-{file.folder_id}",
        "file_name": file.file_name if full_name else file.short_name,
        "original_file_name": file.original_file_name,
        "file_path": None,
        "file_type": file.file_type,
        "file_size": file.file_size,
        "file_creation_date": _time(file.created_at),
        "file_last_modified_date": _time(file.updated_at),
        "processing_status": file.processing_status,
        "error_message": file.error_message or None,
        "total_chunks": file.total_chunks,
        "chunks_embedded": file.chunks_embedded,
        "content": file.content if include_content else None,
        "organization_id": f"org-{file.organization_id}",
        "created_at": _time(file.created_at),
        "updated_at": _time(file.updated_at),
    }


def agent_file_json(row: FileAgent) -> AgentFileJSON:
    return {
        "id": row.public_id,
        "file_id": f"file-{row.file_id}",
        "file_name": row.file_name,
        "folder_id": f"source-{row.folder_id}",
        "folder_name": row.folder.name,
        "is_open": row.is_open,
        "last_accessed_at": _time(row.last_accessed_at),
        "visible_content": row.visible_content if row.is_open else None,
        "start_line": row.start_line,
        "end_line": row.end_line,
    }


def file_passage_json(chunk: FileChunk) -> FilePassage:
    return {
        "id": f"passage-{uuid.uuid5(chunk.file_id, str(chunk.position))}",
        "text": chunk.text,
        "file_id": f"file-{chunk.file_id}",
        "file_name": chunk.file.file_name,
        "source_id": f"source-{chunk.file.folder_id}",
        "archive_id": None,
        "embedding": None,
        "embedding_config": None,
        "metadata": {},
        "tags": [],
        "organization_id": f"org-{chunk.organization_id}",
        "created_at": _time(chunk.file.created_at),
        "updated_at": None,
        "is_deleted": False,
    }


class PanelFile(TypedDict):
    """A file in the chat's memory panel, as the page shows it: the server words its state and range."""

    id: str
    name: str
    folder: str
    is_open: bool
    status: str
    range: str
    chars: int


def panel_file(row: FileAgent, *, total_lines: int | None) -> PanelFile:
    """``total_lines`` (the file's numbered lines) words an open file's range; ``None`` for a closed one."""
    if not row.is_open or total_lines is None:
        status, shown = "closed", "Closed: not in the agent's context"
    elif row.start_line is None or (row.start_line == 0 and row.end_line is None):
        status, shown = "open", f"All {total_lines} lines"
    else:
        last = total_lines if row.end_line is None else min(row.end_line, total_lines)
        status, shown = "open", f"Lines {row.start_line + 1} to {last} of {total_lines}"
    return {
        "id": row.public_id,
        "name": row.file_name,
        "folder": row.folder.name,
        "is_open": row.is_open,
        "status": status,
        "range": shown,
        "chars": len(row.visible_content) if row.is_open else 0,
    }
