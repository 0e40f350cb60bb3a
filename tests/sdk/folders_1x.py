"""Folders and files through letta-client 1.12, as an integrator calls them (run by ``driver.py``).

``folders.create``, ``folders.files.upload/retrieve/list``, ``agents.folders.attach/list`` and
``agents.files.list``, then a turn whose model calls ``grep_files``. Like the driver, this file
imports nothing from the project: it runs in the SDK's virtualenv. ``ctx`` is the driver's ``Context``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODEL = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"
# The small documents of the folders tests, read from the working copy (not from the project's code).
FIXTURES = Path(__file__).resolve().parents[1] / "folders" / "fixtures"
DOCUMENTS = ("guide.pdf", "handbook.docx", "notes.md")
FILE_TOOLS = {"open_files", "grep_files", "semantic_search_files"}
TERMINAL = ("completed", "error")
POLL_SECONDS = 60


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def wait_until_processed(ctx: Any, folder_id: str, file_id: str, first: str) -> list[str]:
    """The statuses a client polling ``folders.files.retrieve`` sees, starting with the upload's answer."""
    seen = [first]
    deadline = time.monotonic() + POLL_SECONDS
    while seen[-1] not in TERMINAL:
        check(time.monotonic() < deadline, f"still processing after {POLL_SECONDS} s: {seen}")
        time.sleep(0.05)
        current = str(ctx.client.folders.files.retrieve(file_id, folder_id=folder_id).processing_status)
        if current != seen[-1]:
            seen.append(current)
    return seen


def folders_upload_process_attach_and_grep(ctx: Any) -> None:
    """Issue 27, done-when 1 for the 1.x line: a PDF, a DOCX and a Markdown file reach ``completed``."""
    client = ctx.client
    name = f"docs-{uuid.uuid4().hex[:8]}"
    folder = client.folders.create(name=name, embedding=EMBEDDING, description="Release documents")
    check(folder.id.startswith("source-") and folder.embedding_config.embedding_model, f"folder {folder!r}")

    statuses: dict[str, list[str]] = {}
    for document in DOCUMENTS:
        with (FIXTURES / document).open("rb") as handle:
            uploaded = client.folders.files.upload(folder.id, file=(document, handle))
        check(uploaded.file_name == f"{name}/{document}", f"the upload keeps the folder prefix: {uploaded.file_name}")
        statuses[document] = wait_until_processed(ctx, folder.id, uploaded.id, str(uploaded.processing_status))
    ctx.facts["statuses"] = statuses
    check(all(seen[-1] == "completed" for seen in statuses.values()), f"statuses {statuses}")

    listed = {file.file_name: file for file in client.folders.files.list(folder.id)}
    check(sorted(listed) == sorted(DOCUMENTS), f"list strips the prefix: {sorted(listed)}")
    check(all(file.total_chunks and file.chunks_embedded == file.total_chunks for file in listed.values()), "chunks")
    notes = client.folders.files.retrieve(listed["notes.md"].id, folder_id=folder.id, include_content=True)
    check("Marmalade" in (notes.content or ""), f"parsed content {notes.content!r}")

    agent = client.agents.create(name="folders-1x", model=MODEL, embedding=EMBEDDING, include_base_tools=False)
    ctx.facts["attach_answer"] = client.agents.folders.attach(folder.id, agent_id=agent.id)
    check(ctx.facts["attach_answer"] is None, "Letta answers null to a 1.x client")
    tools = {tool.name for tool in client.agents.retrieve(agent.id, include=["agent.tools"]).tools}
    check(tools >= FILE_TOOLS, f"file tools attached: {tools}")
    check([source.id for source in client.agents.folders.list(agent.id)] == [folder.id], "the agent's folders")
    check(len(list(client.agents.files.list(agent.id))) == len(DOCUMENTS), "the agent's files")

    ctx.script_llm(
        {"tool_calls": [["grep_files", {"pattern": "codename"}]]},
        {"text": "The codename is Marmalade."},
    )
    answer = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "What is the codename?"}])
    [result] = [m for m in answer.messages if m.message_type == "tool_return_message"]
    ctx.facts["tool_return"] = result.tool_return
    check(result.status == "success" and f"=== {name}/notes.md:" in result.tool_return, f"grep {result.tool_return}")
    check("> " in result.tool_return and "Marmalade" in result.tool_return, "the matching line")
    check(answer.messages[-1].content == "The codename is Marmalade.", f"{answer.messages[-1]!r}")

    client.agents.delete(agent.id)
    client.folders.delete(folder.id)


FOLDER_SCENARIOS: dict[str, Callable[[Any], None]] = {
    fn.__name__: fn for fn in (folders_upload_process_attach_and_grep,)
}
