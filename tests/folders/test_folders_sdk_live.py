"""Folders and files through the official ``letta-client`` (0.1.324) against a live server: a PDF, a DOCX
and a Markdown file uploaded, polled until ``completed``, and the folder attached to an agent."""

from __future__ import annotations

import time

import pytest
from letta_client import Letta
from letta_client.core.api_error import ApiError

from tests.folders.conftest import FIXTURES

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]


def wait_until_processed(sdk_client: Letta, folder_id: str, file_id: str) -> list[str]:
    """The statuses seen while polling, as a client following Letta's docs does."""
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = sdk_client.folders.files.list(folder_id=folder_id)
        current = next(file.processing_status for file in status if file.id == file_id)
        if not seen or seen[-1] != current:
            seen.append(str(current))
        if current in ("completed", "error"):
            return seen
        time.sleep(0.05)
    raise AssertionError(f"still processing: {seen}")


def test_the_sdk_uploads_a_pdf_a_docx_and_markdown_and_sees_them_completed(sdk_client: Letta) -> None:
    folder = sdk_client.folders.create(name="sdk-docs", embedding="demo/hashed-256")
    results = {}
    for name in ("guide.pdf", "handbook.docx", "notes.md"):
        with (FIXTURES / name).open("rb") as handle:
            uploaded = sdk_client.folders.files.upload(folder_id=folder.id, file=(name, handle))
        assert uploaded.file_name == f"sdk-docs/{name}"
        results[name] = wait_until_processed(sdk_client, folder.id, uploaded.id)

    assert all(seen[-1] == "completed" for seen in results.values()), results
    assert sdk_client.folders.count() >= 1
    agent = sdk_client.agents.create(name="sdk-reader", model="demo/echo-1", embedding="demo/hashed-256")
    state = sdk_client.agents.folders.attach(agent_id=agent.id, folder_id=folder.id)
    assert {"open_files", "grep_files", "semantic_search_files"} <= {tool.name for tool in state.tools}
    assert [source.name for source in sdk_client.agents.folders.list(agent_id=agent.id)] == ["sdk-docs"]
    assert [source.name for source in sdk_client.sources.list()] == [f.name for f in sdk_client.folders.list()]
    sdk_client.agents.delete(agent_id=agent.id)
    sdk_client.folders.delete(folder_id=folder.id)


def test_the_sdk_gets_a_415_for_an_unsupported_type(sdk_client: Letta) -> None:
    folder = sdk_client.folders.create(name="sdk-refused", embedding="demo/hashed-256")

    with pytest.raises(ApiError) as refused:
        sdk_client.folders.files.upload(folder_id=folder.id, file=("tool.exe", b"MZ", "application/x-msdownload"))

    assert refused.value.status_code == 415
    assert sdk_client.folders.files.list(folder_id=folder.id) == []
