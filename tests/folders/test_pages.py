"""The Folders pages with Django's test client: create a folder, upload, see statuses, errors and the
parsed text; another organization's folder is a 404."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from folders.models import Folder
from tests.folders.conftest import upload_file

if TYPE_CHECKING:
    from django.test import Client

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def alice(client: Client, cast: Cast) -> Client:
    client.force_login(cast.alice)
    return client


def test_a_member_creates_a_folder_uploads_and_sees_the_file_completed(alice: Client) -> None:
    created = alice.post("/folders/", {"name": "manuals", "description": "Plant manuals"})
    folder = Folder.objects.get(name="manuals")
    assert created.status_code == 302 and created["Location"] == f"/folders/{folder.public_id}/"

    uploaded = alice.post(f"/folders/{folder.public_id}/", {"file": upload_file("notes.md")})
    page = alice.get(f"/folders/{folder.public_id}/").content.decode()
    status = alice.get(f"/folders/{folder.public_id}/status/").json()

    assert uploaded.status_code == 302
    assert "notes.md" in page and "status-completed" in page
    assert [(f["file_name"], f["processing_status"]) for f in status["files"]] == [("notes.md", "completed")]
    preview = alice.get(f"/folders/{folder.public_id}/files/{status['files'][0]['id']}/").content.decode()
    assert "The codename is Marmalade." in preview
    assert "manuals" in alice.get("/folders/").content.decode()


def test_a_refused_upload_says_why_as_json_for_the_drop_zone(alice: Client) -> None:
    alice.post("/folders/", {"name": "manuals"})
    folder = Folder.objects.get(name="manuals")

    answer = alice.post(
        f"/folders/{folder.public_id}/",
        {"file": upload_file("tool.exe", b"MZ", "application/x-msdownload")},
        HTTP_ACCEPT="application/json",
    )

    assert answer.status_code == 400
    assert answer.json()["error"].startswith(
        "tool.exe: Unsupported file type: application/x-msdownload (filename: tool.exe)"
    )
    assert folder.files.count() == 0


def test_a_corrupt_pdf_shows_its_error_on_the_page(alice: Client) -> None:
    alice.post("/folders/", {"name": "manuals"})
    folder = Folder.objects.get(name="manuals")

    alice.post(f"/folders/{folder.public_id}/", {"file": upload_file("corrupt.pdf")})

    page = alice.get(f"/folders/{folder.public_id}/").content.decode()
    assert "status-error" in page and "Could not parse corrupt.pdf" in page


def test_another_organizations_folder_and_file_pages_are_404(client: Client, cast: Cast, alice: Client) -> None:
    alice.post("/folders/", {"name": "manuals"})
    folder = Folder.objects.get(name="manuals")
    alice.post(f"/folders/{folder.public_id}/", {"file": upload_file("notes.md")})
    file = folder.files.get()
    client.force_login(cast.charlie)

    for path in (
        f"/folders/{folder.public_id}/",
        f"/folders/{folder.public_id}/status/",
        f"/folders/{folder.public_id}/files/{file.public_id}/",
        f"/media/{file.storage_key}",
        f"/{file.storage_key}",
    ):
        assert client.get(path).status_code == 404, path
    assert client.post(f"/folders/{folder.public_id}/", {"file": upload_file("notes.md")}).status_code == 404
    assert folder.files.count() == 1
    assert "manuals" not in client.get("/folders/").content.decode()
