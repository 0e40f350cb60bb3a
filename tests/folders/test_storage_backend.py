"""The originals' storage comes from the environment (``config.storage.folders_storage``): local files by
default, any Django backend (django-storages' S3 one) with its options as JSON; the folders code only
opens, saves and deletes through the storage API, so an upload round-trips through whatever is set."""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING, Any

import pytest
from django.core.files.storage import storages

from config.storage import LOCAL_BACKEND, folders_storage
from folders import services
from folders.models import FileMetadata
from tests.folders.conftest import upload_file

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import Cast

S3 = "storages.backends.s3.S3Storage"


def test_the_local_default_keeps_originals_under_the_root_and_takes_json_options() -> None:
    plain = folders_storage(backend=LOCAL_BACKEND, root="/srv/files", options="")
    tuned = folders_storage(backend=LOCAL_BACKEND, root="/srv/files", options='{"file_permissions_mode": 384}')

    assert plain == {"BACKEND": LOCAL_BACKEND, "OPTIONS": {"location": "/srv/files"}}
    assert tuned["OPTIONS"] == {"location": "/srv/files", "file_permissions_mode": 384}


def test_an_s3_compatible_backend_gets_its_options_as_given_and_no_local_root() -> None:
    options = '{"bucket_name": "agent-files", "endpoint_url": "https://s3.example.com", "location": "folders"}'

    configured = folders_storage(backend=S3, root="/srv/files", options=options)

    assert configured == {
        "BACKEND": S3,
        "OPTIONS": {"bucket_name": "agent-files", "endpoint_url": "https://s3.example.com", "location": "folders"},
    }


def test_options_that_are_not_a_json_object_are_refused_at_startup() -> None:
    with pytest.raises(ValueError, match="must be a JSON object"):
        folders_storage(backend=S3, root="", options='["agent-files"]')


@pytest.mark.django_db(transaction=True)
def test_an_upload_round_trips_through_the_configured_backend(settings: Any, tmp_path: Path, cast: Cast) -> None:
    root = tmp_path / "originals"
    settings.STORAGES = {
        **settings.STORAGES,
        "folders": folders_storage(backend=LOCAL_BACKEND, root=str(root), options='{"file_permissions_mode": 384}'),
    }
    folder = services.folder_create(organization=cast.org_a, name="manuals")

    stored = services.file_upload(folder=folder, upload=upload_file("notes.md")).file
    row = FileMetadata.objects.get(pk=stored.pk)
    key, expected_key = row.storage_key, f"{cast.org_a.pk}/{row.pk}"
    original = root / key
    kept = (original.read_bytes(), stat.S_IMODE(original.stat().st_mode), row.processing_status)
    services.file_delete(file=row)

    assert key == expected_key
    assert kept[0] == upload_file("notes.md").read() and kept[1:] == (0o600, "completed")
    assert not storages["folders"].exists(key) and not original.exists()
