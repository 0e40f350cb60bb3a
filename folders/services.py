"""Writes of folders and files: create, update and delete folders; upload, replace and delete files.

An upload is checked whole before anything is written (name, type, size, the organization's
quota, duplicates): a refused upload changes nothing. The original is kept in
``storages["folders"]`` under ``<organization uuid>/<file uuid>``, never served by URL; the
processing (``folders.processing``) is handed to its executor once the row is committed.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files.storage import storages
from django.db import IntegrityError, transaction

from agents.llm.agent_settings import validate_embedding_handle
from agents.llm.handles import DEFAULT_EMBEDDING_HANDLE
from core.errors import Conflict, InvalidArgument
from folders.errors import FileTooLarge, LegacySpreadsheetNotSupported, UnsupportedFileType
from folders.filetypes import file_type_of, is_legacy_spreadsheet
from folders.models import FileMetadata, Folder, ProcessingStatus
from folders.selectors import organization_bytes
from folders.tasks import dispatch

if TYPE_CHECKING:
    from django.core.files.uploadedfile import UploadedFile

    from accounts.models import Organization, User

DUPLICATE_MODES = ("suffix", "error", "skip", "replace")
_UNSAFE = re.compile(r"[^\w.\- ()\[\]]+", re.UNICODE)


def file_storage() -> Any:
    return storages["folders"]


def _taken(name: str) -> Conflict:
    return Conflict(
        f"A unique constraint was violated for Folder. Check your input for duplicates: name {name!r} is taken"
    )


def folder_create(
    *,
    organization: Organization,
    name: str,
    user: User | None = None,
    description: str = "",
    instructions: str = "",
    metadata: dict[str, Any] | None = None,
    embedding: str | None = None,
    embedding_chunk_size: int | None = None,
) -> Folder:
    handle = validate_embedding_handle(embedding or DEFAULT_EMBEDDING_HANDLE, organization=organization)
    try:
        with transaction.atomic():
            return Folder.objects.create(
                organization=organization,
                created_by=user,
                name=name,
                description=description or "",
                instructions=instructions or "",
                metadata=metadata or {},
                embedding=handle,
                embedding_chunk_size=embedding_chunk_size or 300,
            )
    except IntegrityError:
        raise _taken(name) from None


def folder_update(*, folder: Folder, **fields: Any) -> Folder:
    for key in ("name", "description", "instructions", "metadata"):
        if fields.get(key) is not None:
            setattr(folder, key, fields[key])
    try:
        with transaction.atomic():
            folder.save()
    except IntegrityError:
        raise _taken(folder.name) from None
    return folder


def folder_delete(*, folder: Folder) -> None:
    """Delete the folder, its files (rows and originals) and their places in every agent's context."""
    keys = list(folder.files.exclude(storage_key="").values_list("storage_key", flat=True))
    with transaction.atomic():
        folder.delete()
    transaction.on_commit(lambda: _remove_originals(keys))


def file_delete(*, file: FileMetadata) -> None:
    key = file.storage_key
    with transaction.atomic():
        file.delete()
    transaction.on_commit(lambda: _remove_originals([key]))


def _remove_originals(keys: list[str]) -> None:
    storage = file_storage()
    for key in keys:
        if key:
            storage.delete(key)


def sanitized_name(raw: str) -> str:
    """The uploaded name reduced to a safe basename (a base starting with ``.`` is refused, as Letta does)."""
    base = posixpath.basename((raw or "").replace("\\", "/")).strip()
    if not base or base.startswith("."):
        raise InvalidArgument(f"Invalid filename {raw!r}: it may not be empty or start with '.'", field="file")
    return _UNSAFE.sub("_", base)[:255]


@dataclass(frozen=True)
class Upload:
    file: FileMetadata
    skipped: bool = False


def _check_size(organization: Organization, size: int, name: str) -> None:
    if size == 0:
        raise InvalidArgument(f"The file {name} is empty", field="file")
    limit = int(settings.FOLDERS_MAX_FILE_BYTES)
    if size > limit:
        raise FileTooLarge(f"The file {name} is {size} bytes; files may be at most {limit} bytes")
    quota = int(settings.FOLDERS_MAX_ORGANIZATION_BYTES)
    if organization_bytes(organization.pk) + size > quota:
        raise FileTooLarge(f"The organization's files would pass its limit of {quota} bytes")


def _stored_name(folder: Folder, name: str, mode: str) -> tuple[str, FileMetadata | None]:
    """The ``file_name`` to store and, for ``skip``/``replace``, the existing file of that name."""
    existing = folder.files.filter(original_file_name=name).order_by("created_at")
    first = existing.first()
    if first is None:
        return f"{folder.name}/{name}", None
    if mode == "error":
        raise InvalidArgument(f"File '{name}' already exists in folder '{folder.name}'", field="file")
    if mode in ("skip", "replace"):
        return f"{folder.name}/{name}", first
    stem, extension = posixpath.splitext(name)
    return f"{folder.name}/{stem}_({existing.count()}){extension}", None


def file_upload(
    *, folder: Folder, upload: UploadedFile, name: str | None = None, duplicate_handling: str = "suffix"
) -> Upload:
    """Store ``upload`` in ``folder`` and queue its processing; see the module's docstring."""
    if duplicate_handling not in DUPLICATE_MODES:
        raise InvalidArgument(f"duplicate_handling must be one of {', '.join(DUPLICATE_MODES)}")
    original = name or sanitized_name(upload.name or "")
    file_type = file_type_of(original, upload.content_type)
    if is_legacy_spreadsheet(original):
        raise LegacySpreadsheetNotSupported(original)
    if file_type is None:
        raise UnsupportedFileType(upload.content_type or "application/octet-stream", original)
    _check_size(folder.organization, int(upload.size or 0), original)
    stored, existing = _stored_name(folder, original, duplicate_handling)
    if existing is not None and duplicate_handling == "skip":
        return Upload(existing, skipped=True)
    with transaction.atomic():
        if existing is not None:
            file_delete(file=existing)
        row = FileMetadata.objects.create(
            organization_id=folder.organization_id,
            folder=folder,
            file_name=stored,
            original_file_name=original,
            file_type=file_type,
            file_size=int(upload.size or 0),
            # Handed to the parser once committed: Letta answers an upload at "parsing" too.
            processing_status=ProcessingStatus.PARSING,
        )
        key = f"{folder.organization_id}/{row.pk}"
        upload.seek(0)
        row.storage_key = file_storage().save(key, upload)
        row.save(update_fields=["storage_key"])
        transaction.on_commit(lambda: dispatch(row.pk))
    return Upload(row)
