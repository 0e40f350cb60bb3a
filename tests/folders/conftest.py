"""Folders tests: uploads processed before the upload answers (``inline``), originals in a temporary directory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

if TYPE_CHECKING:
    from rest_framework.test import APIClient

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def folder_settings(settings: Any, tmp_path: Path) -> None:
    settings.FOLDERS_PROCESSING = "inline"
    settings.STORAGES = {
        **settings.STORAGES,
        "folders": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}},
    }


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def upload_file(name: str, data: bytes | None = None, content_type: str = "application/octet-stream") -> Any:
    return SimpleUploadedFile(name, fixture_bytes(name) if data is None else data, content_type=content_type)


def upload(client: APIClient, folder_id: str, name: str, data: bytes | None = None, query: str = "", **kw: Any) -> Any:
    """POST a multipart upload of the fixture ``name`` (or ``data``) to the folder."""
    body = {"file": upload_file(name, data, kw.pop("content_type", "application/octet-stream"))}
    return client.post(f"/v1/folders/{folder_id}/upload{query}", body, format="multipart", **kw)
