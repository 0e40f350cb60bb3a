"""A file's processing: parse, open in attached agents, chunk, embed; with its status and progress on the row.

Statuses follow Letta: ``pending → parsing → embedding → completed``, or ``error`` with the
reason from any status before. An upload is answered at ``parsing``, as Letta answers it: its row
is created there, handed to the parser (``folders.services.file_upload``). ``process_file`` is the
one pipeline; its executors (``folders.tasks``) only call it. Progress (``chunks_embedded`` of
``total_chunks``) is written as the chunks are embedded, at most every ``PROGRESS_SECONDS``; after
each status or progress write the row is announced (``folders.broadcast.announce_file``), so the Files page and the chat
see it move without polling. The delivery that starts a file claims it (``processing_started_at``);
a second delivery of the same file finds it claimed and does nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files.storage import storages
from django.db import transaction
from django.utils import timezone

from agents.memory.archival import batch_embedder_for
from folders.attachments import open_in_attached_agents
from folders.broadcast import announce_file
from folders.chunking import passages
from folders.errors import ParseFailed
from folders.models import FileChunk, FileMetadata, ProcessingStatus
from folders.parsing import parse

if TYPE_CHECKING:
    from accounts.models import Organization

logger = logging.getLogger(__name__)
PROGRESS_SECONDS = 0.5
EMBED_FAILED = "Embedding failed: {}"
Progress = Callable[[FileMetadata], None]


def _move(file: FileMetadata, status: str, **fields: Any) -> bool:
    """Move ``file`` to ``status`` if it is still where this process left it (a conditional UPDATE)."""
    moved = (
        FileMetadata.objects.filter(pk=file.pk, processing_status=file.processing_status)
        .exclude(processing_status__in=[ProcessingStatus.COMPLETED, ProcessingStatus.ERROR])
        .update(processing_status=status, **fields)
    )
    if moved:
        file.processing_status = status
        for key, value in fields.items():
            setattr(file, key, value)
    return bool(moved)


def fail(file: FileMetadata, reason: str) -> None:
    _move(file, ProcessingStatus.ERROR, error_message=reason[:2000])


def process_file(file_pk: Any, *, progress: Progress | None = None) -> FileMetadata | None:
    """Run the whole pipeline for one file not yet started; the row as it ended (``None``: not found, or
    claimed by another delivery)."""
    claimed = (
        FileMetadata.objects.filter(pk=file_pk, processing_started_at__isnull=True)
        .filter(processing_status__in=[ProcessingStatus.PENDING, ProcessingStatus.PARSING])
        .update(processing_started_at=timezone.now())
    )
    file = FileMetadata.objects.select_related("folder", "folder__organization").filter(pk=file_pk).first()
    if not claimed or file is None:
        return None
    started = time.monotonic()

    def report(row: FileMetadata) -> None:
        announce_file(row)
        if progress is not None:
            progress(row)

    if file.processing_status == ProcessingStatus.PENDING and not _move(file, ProcessingStatus.PARSING):
        return None
    report(file)
    try:
        with storages["folders"].open(file.storage_key, "rb") as handle:
            data = handle.read()
        text = parse(data, file_type=file.file_type, file_name=file.original_file_name)
    except ParseFailed as exc:
        fail(file, str(exc))
        report(file)
        return file
    except Exception as exc:  # a storage or converter fault ends this file, never the worker
        logger.exception("Parsing file %s failed", file.pk)
        fail(file, f"Parsing failed: {type(exc).__name__}")
        report(file)
        return file
    file.content = text
    FileMetadata.objects.filter(pk=file.pk).update(content=text)
    open_in_attached_agents(file)
    _embed(file, report)
    FileMetadata.objects.filter(pk=file.pk).update(processing_seconds=time.monotonic() - started)
    report(file)
    return file


def _embed(file: FileMetadata, report: Progress) -> None:
    folder = file.folder
    pieces = passages(file.content or "", size=folder.embedding_chunk_size)
    if not _move(file, ProcessingStatus.EMBEDDING, total_chunks=len(pieces), chunks_embedded=0):
        return
    report(file)
    embed = batch_embedder_for(folder.embedding, _organization(file))
    batch_size = max(1, int(settings.FOLDERS_EMBEDDING_BATCH_SIZE))
    rows: list[FileChunk] = []
    last = time.monotonic()
    for start in range(0, len(pieces), batch_size):
        batch = pieces[start : start + batch_size]
        vectors = embed(batch) if embed is not None else [None] * len(batch)
        for position, (text, vector) in enumerate(zip(batch, vectors, strict=True), start=start):
            rows.append(
                FileChunk(
                    organization_id=file.organization_id,
                    file_id=file.pk,
                    position=position,
                    text=text,
                    embedding=vector,
                    embedding_model=folder.embedding if vector is not None else "",
                )
            )
        if time.monotonic() - last >= PROGRESS_SECONDS:
            _save_chunks(file, rows)
            rows = []
            report(file)
            last = time.monotonic()
    with transaction.atomic():
        _save_chunks(file, rows)
        _move(file, ProcessingStatus.COMPLETED, chunks_embedded=len(pieces))


def _save_chunks(file: FileMetadata, rows: list[FileChunk]) -> None:
    FileChunk.objects.bulk_create(rows, batch_size=500)
    done = (file.chunks_embedded or 0) + len(rows)
    FileMetadata.objects.filter(pk=file.pk).update(chunks_embedded=done)
    file.chunks_embedded = done


def _organization(file: FileMetadata) -> Organization:
    return file.folder.organization
