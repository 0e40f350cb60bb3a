"""A file's chunks are embedded in batches: one provider request for many chunks, each vector on its chunk."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from django.core.files.storage import storages

from folders.models import FileChunk, FileMetadata, Folder
from folders.processing import process_file
from providers import services
from tests.fake_llm.listings import fake_embedding
from tests.folders.conftest import upload_file

if TYPE_CHECKING:
    from pytest_django.fixtures import SettingsWrapper

    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db


def stored_file(cast: Cast, folder: Folder, lines: int) -> FileMetadata:
    text = "\n".join(f"Line {n} says the harbour opens at dawn number {n}." for n in range(lines)).encode()
    return FileMetadata.objects.create(
        organization=cast.org_a,
        folder=folder,
        file_name=f"{folder.name}/notes.txt",
        original_file_name="notes.txt",
        file_type="text/plain",
        file_size=len(text),
        storage_key=storages["folders"].save("notes", upload_file("notes.txt", text)),
    )


def test_a_files_chunks_are_embedded_a_batch_to_a_request_with_each_vector_on_its_chunk(
    cast: Cast, org_providers: OrgProviders, fake_llm: FakeLLMServer, settings: SettingsWrapper
) -> None:
    settings.FOLDERS_EMBEDDING_BATCH_SIZE = 8
    folder = Folder.objects.create(
        organization=cast.org_a, name="docs", embedding="my-ollama/nomic-embed-text:latest", embedding_chunk_size=40
    )
    row = stored_file(cast, folder, lines=60)

    process_file(row.pk)

    chunks = list(FileChunk.objects.filter(file=row).order_by("position"))
    requests = [request for request in fake_llm.listing_requests if request.path == "/v1/embeddings"]
    assert len(chunks) > 8
    assert len(requests) == math.ceil(len(chunks) / 8)
    assert [len(request.body["input"]) for request in requests[:-1]] == [8] * (len(requests) - 1)
    assert [text for request in requests for text in request.body["input"]] == [chunk.text for chunk in chunks]
    assert all(chunk.embedding == pytest.approx(fake_embedding(chunk.text)) for chunk in chunks)
    assert {chunk.embedding_model for chunk in chunks} == {"my-ollama/nomic-embed-text:latest"}
    assert FileMetadata.objects.get(pk=row.pk).processing_status == "completed"


def test_a_provider_that_fails_to_embed_leaves_the_chunks_searchable_as_text_and_the_file_completed(
    cast: Cast, no_env_providers: SettingsWrapper
) -> None:
    services.provider_create(
        organization=cast.org_a, name="gone", provider_type="ollama", base_url="http://127.0.0.1:9"
    )
    folder = Folder.objects.create(
        organization=cast.org_a, name="docs", embedding="gone/nomic-embed-text:latest", embedding_chunk_size=40
    )
    row = stored_file(cast, folder, lines=20)

    process_file(row.pk)

    chunks = list(FileChunk.objects.filter(file=row))
    assert chunks
    assert all(chunk.embedding is None and chunk.embedding_model == "" for chunk in chunks)
    assert FileMetadata.objects.get(pk=row.pk).processing_status == "completed"
