"""A file uploaded to a server with Celery workers is processed by a worker (``folders.process_file``),
its progress visible through the API while it runs."""

from __future__ import annotations

import time

import pytest

from tests.folders.conftest import FIXTURES
from tests.support.live_chat import CeleryStack

pytestmark = [pytest.mark.live_server, pytest.mark.worker, pytest.mark.timeout(400)]


def test_a_worker_processes_an_uploaded_pdf_to_completed(celery_stack: CeleryStack) -> None:
    with celery_stack.chat.api() as api:
        folder = api.post("/v1/folders/", json={"name": "worker-docs", "embedding": "demo/x"}).raise_for_status()
        folder_id = folder.json()["id"]
        with (FIXTURES / "guide.pdf").open("rb") as handle:
            uploaded = (
                api.post(f"/v1/folders/{folder_id}/upload", files={"file": ("guide.pdf", handle, "application/pdf")})
                .raise_for_status()
                .json()
            )
        seen: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            file = api.get(f"/v1/folders/{folder_id}/files/{uploaded['id']}").raise_for_status().json()
            if not seen or seen[-1] != file["processing_status"]:
                seen.append(file["processing_status"])
            if file["processing_status"] in ("completed", "error"):
                break
            time.sleep(0.05)

    assert seen[0] in ("pending", "parsing") and seen[-1] == "completed", (seen, file)
    assert file["total_chunks"] == file["chunks_embedded"] >= 1
