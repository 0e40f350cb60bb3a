"""Uploading files to a folder over ``/v1``: they are parsed, chunked and embedded, with Letta's statuses
and progress; bad files end with a clear answer and change nothing else."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from django.core.files.storage import storages

from folders.models import FileChunk, FileMetadata, Folder
from folders.processing import process_file
from tests.folders.conftest import fixture_bytes, upload, upload_file

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def folder(alice_api: APIClient) -> dict[str, Any]:
    response = alice_api.post("/v1/folders/", {"name": "docs", "embedding": "demo/hash-256"}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def state(org_files: Any = None) -> list[tuple[Any, ...]]:
    """Every file and chunk row, to show a refused upload changed nothing."""
    return [
        *FileMetadata.objects.order_by("pk").values_list("pk", "file_name", "processing_status", "file_size"),
        *FileChunk.objects.order_by("pk").values_list("pk", "text"),
    ]


def files_in_storage() -> list[str]:
    storage = storages["folders"]
    return [f"{d}/{f}" for d in storage.listdir("")[0] for f in storage.listdir(d)[1]]


def test_a_folder_is_created_with_letta_shape_and_its_name_is_unique(alice_api: APIClient, folder: dict) -> None:
    again = alice_api.post("/v1/folders/", {"name": "docs"}, format="json")

    assert folder["id"].startswith("source-")
    assert folder["embedding_config"]["handle"] == "demo/hash-256"
    assert folder["embedding_config"]["embedding_chunk_size"] == 300
    assert again.status_code == 409
    assert alice_api.get("/v1/folders/count").json() == 1
    assert alice_api.get("/v1/folders/name/docs").json() == folder["id"]
    assert alice_api.get("/v1/sources/").json()[0]["vector_db_provider"] == "native"


@pytest.mark.parametrize(
    ("name", "file_type", "words"),
    [
        ("guide.pdf", "application/pdf", "pelican database listens on port 5433"),
        ("handbook.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "Lisbon"),
        ("notes.md", "text/x-markdown", "The codename is Marmalade."),
        (
            "budget.xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "| Harbour crane | 1200 |",
        ),
    ],
)
def test_a_pdf_a_docx_a_markdown_file_and_a_workbook_reach_completed_with_their_text_and_chunks(
    alice_api: APIClient, folder: dict, name: str, file_type: str, words: str
) -> None:
    response = upload(alice_api, folder["id"], name)

    assert response.status_code == 200, response.content
    uploaded = response.json()
    assert uploaded["file_name"] == f"docs/{name}"
    assert uploaded["file_type"] == file_type
    listed = alice_api.get(f"/v1/folders/{folder['id']}/files").json()
    assert [(f["file_name"], f["processing_status"]) for f in listed] == [(name, "completed")]
    detail = alice_api.get(f"/v1/folders/{folder['id']}/files/{uploaded['id']}?include_content=true").json()
    assert words in detail["content"]
    assert detail["total_chunks"] == detail["chunks_embedded"] >= 1
    assert detail["error_message"] is None
    chunks = FileChunk.objects.filter(file__pk=FileMetadata.parse_public_id(uploaded["id"]))
    assert all(chunk.embedding and len(chunk.embedding) == 256 for chunk in chunks)


def test_processing_moves_through_parsing_and_embedding_with_progress_on_the_row(cast: Cast, settings: Any) -> None:
    folder = Folder.objects.create(organization=cast.org_a, name="big", embedding="demo/x", embedding_chunk_size=50)
    text = "\n".join(f"Line {n} says the harbour opens at dawn." for n in range(3000)).encode()
    row = FileMetadata.objects.create(  # left pending: this test runs the pipeline itself
        organization=cast.org_a,
        folder=folder,
        file_name="big/big.txt",
        original_file_name="big.txt",
        file_type="text/plain",
        file_size=len(text),
        storage_key=storages["folders"].save("big", upload_file("big.txt", text)),
    )
    seen: list[tuple[str, int | None, int | None]] = []

    def observe(_file: FileMetadata) -> None:
        stored = FileMetadata.objects.get(pk=row.pk)  # what a poller of the API would read now
        seen.append((stored.processing_status, stored.chunks_embedded, stored.total_chunks))

    process_file(row.pk, progress=observe)

    statuses = [status for status, _, _ in seen]
    assert statuses[0] == "parsing" and statuses[-1] == "completed"
    assert "embedding" in statuses
    total = seen[-1][2]
    assert total and total > 100
    embedded = [done for status, done, _ in seen if status == "embedding"]
    assert embedded == sorted(embedded) and embedded[0] == 0
    assert seen[-1][1] == total
    assert process_file(row.pk) is None  # a second delivery does nothing


def test_the_upload_answers_parsing_as_letta_does_and_the_processing_goes_on(
    alice_api: APIClient, folder: dict, settings: Any
) -> None:
    settings.FOLDERS_PROCESSING = "thread"  # processed after the answer, as a server does

    answer = upload(alice_api, folder["id"], "notes.md").json()
    deadline, status = time.monotonic() + 30, answer["processing_status"]
    while status not in ("completed", "error") and time.monotonic() < deadline:
        time.sleep(0.05)
        status = alice_api.get(f"/v1/folders/{folder['id']}/files/{answer['id']}").json()["processing_status"]

    assert answer["processing_status"] == "parsing"
    assert status == "completed"
    assert process_file(FileMetadata.parse_public_id(answer["id"])) is None  # claimed once: never processed twice


def test_a_corrupt_pdf_ends_in_error_with_the_converters_reason(alice_api: APIClient, folder: dict) -> None:
    response = upload(alice_api, folder["id"], "corrupt.pdf")

    assert response.status_code == 200
    detail = alice_api.get(f"/v1/folders/{folder['id']}/files/{response.json()['id']}").json()
    assert detail["processing_status"] == "error"
    assert detail["error_message"].startswith("Could not parse corrupt.pdf:")
    assert "PDF" in detail["error_message"]
    assert FileChunk.objects.count() == 0


def test_an_empty_file_is_refused_and_nothing_changes(alice_api: APIClient, folder: dict) -> None:
    upload(alice_api, folder["id"], "notes.md")
    before, stored = state(), files_in_storage()

    response = upload(alice_api, folder["id"], "empty.txt", b"")

    assert response.status_code == 400
    assert response.json() == {"detail": "INVALID_ARGUMENT: The file empty.txt is empty"}
    assert (state(), files_in_storage()) == (before, stored)


def test_a_file_over_the_limit_is_refused_with_413_and_nothing_changes(
    alice_api: APIClient, folder: dict, settings: Any
) -> None:
    upload(alice_api, folder["id"], "notes.md")
    settings.FOLDERS_MAX_FILE_BYTES = 1000
    before, stored = state(), files_in_storage()

    response = upload(alice_api, folder["id"], "big.txt", b"x" * 1001)

    assert response.status_code == 413
    assert response.json()["detail"] == "The file big.txt is 1001 bytes; files may be at most 1000 bytes"
    assert (state(), files_in_storage()) == (before, stored)


def test_the_organizations_quota_counts_every_folder(alice_api: APIClient, folder: dict, settings: Any) -> None:
    upload(alice_api, folder["id"], "notes.md")
    settings.FOLDERS_MAX_ORGANIZATION_BYTES = len(fixture_bytes("notes.md")) + 10

    response = upload(alice_api, folder["id"], "more.txt", b"y" * 11)

    assert response.status_code == 413
    assert "organization's files would pass its limit" in response.json()["detail"]


def test_an_unsupported_type_is_refused_with_415_and_nothing_changes(alice_api: APIClient, folder: dict) -> None:
    upload(alice_api, folder["id"], "notes.md")
    before, stored = state(), files_in_storage()

    response = upload(alice_api, folder["id"], "tool.exe", b"MZ\x90\x00", content_type="application/x-msdownload")

    assert response.status_code == 415
    assert response.json()["detail"] == (
        "Unsupported file type: application/x-msdownload (filename: tool.exe). Supported types: PDF, text files "
        "(.txt, .md), JSON, and code files (.py, .js, .java, etc.)."
    )
    assert (state(), files_in_storage()) == (before, stored)


def test_a_workbook_puts_each_sheet_in_the_text_as_a_table(alice_api: APIClient, folder: dict) -> None:
    uploaded = upload(alice_api, folder["id"], "budget.xlsx").json()

    detail = alice_api.get(f"/v1/folders/{folder['id']}/files/{uploaded['id']}?include_content=true").json()
    assert detail["processing_status"] == "completed"
    assert (
        "## Q1\n\n| Item | Cost |\n| --- | --- |\n| Harbour crane | 1200 |\n| Ferry fuel | 340.5 |" in detail["content"]
    )
    assert "## Notes\n\n| The ferry leaves at seven. |" in detail["content"]


@pytest.mark.parametrize("content_type", ["application/vnd.ms-excel", "application/octet-stream"])
def test_an_old_xls_workbook_is_refused_with_415_saying_to_save_it_as_xlsx(
    alice_api: APIClient, folder: dict, content_type: str
) -> None:
    before, stored = state(), files_in_storage()

    response = upload(
        alice_api, folder["id"], "old-budget.xls", b"\xd0\xcf\x11\xe0 not really", content_type=content_type
    )

    assert response.status_code == 415
    detail = response.json()["detail"]
    assert detail.startswith(
        "XLS (Excel 97-2003) is not supported (filename: old-budget.xls): save the workbook as XLSX"
    )
    assert (state(), files_in_storage()) == (before, stored)


def test_a_corrupt_workbook_ends_in_error_with_the_reason(alice_api: APIClient, folder: dict) -> None:
    uploaded = upload(alice_api, folder["id"], "broken.xlsx", b"PK\x03\x04 not really a workbook").json()

    detail = alice_api.get(f"/v1/folders/{folder['id']}/files/{uploaded['id']}").json()
    assert detail["processing_status"] == "error"
    assert detail["error_message"]


def test_duplicates_follow_letta_modes(alice_api: APIClient, folder: dict) -> None:
    first = upload(alice_api, folder["id"], "notes.md").json()
    suffixed = upload(alice_api, folder["id"], "notes.md").json()
    refused = upload(alice_api, folder["id"], "notes.md", query="?duplicate_handling=error")
    skipped = upload(alice_api, folder["id"], "notes.md", query="?duplicate_handling=skip")
    replaced = upload(alice_api, folder["id"], "notes.md", b"# New notes\n", query="?duplicate_handling=replace")

    assert suffixed["file_name"] == "docs/notes_(1).md"
    assert refused.status_code == 400
    assert refused.json()["detail"] == "INVALID_ARGUMENT: File 'notes.md' already exists in folder 'docs'"
    assert (skipped.json()["id"], skipped["X-Upload-Result"]) == (first["id"], "skipped")
    names = {f["id"]: f["file_name"] for f in alice_api.get(f"/v1/folders/{folder['id']}/files").json()}
    assert first["id"] not in names and replaced.json()["id"] in names
    assert len(files_in_storage()) == 2


def test_deleting_a_file_removes_its_row_chunks_and_original(alice_api: APIClient, folder: dict) -> None:
    uploaded = upload(alice_api, folder["id"], "notes.md").json()

    with pytest.MonkeyPatch.context():
        response = alice_api.delete(f"/v1/folders/{folder['id']}/{uploaded['id']}")

    assert response.status_code == 204
    assert alice_api.get(f"/v1/folders/{folder['id']}/files").json() == []
    assert FileChunk.objects.count() == 0


def test_a_name_starting_with_a_dot_is_refused(alice_api: APIClient, folder: dict) -> None:
    response = upload(alice_api, folder["id"], ".env", b"SECRET=1")

    assert response.status_code == 400
    assert FileMetadata.objects.count() == 0
