"""The ``<directories>`` section of an agent's system prompt: its folders and their files, open ones with
their visible lines, in Letta's format (LETTA_PLATFORM §3.5).

``agents.memory.prompt`` compiles it after the memory blocks through ``settings.MEMORY_SECTIONS``
(this package sits beside ``agents.memory``, which never imports it), so it is part of the
system prompt and counts against the context window like any section. Empty when no folder is
attached.
"""

from __future__ import annotations

from typing import Any

from agents.models import Agent
from folders.attachments import file_limits
from folders.models import FileAgent, Folder


def directories_section(*, organization_id: Any, agent_id: Any) -> str:
    folders = list(Folder.objects.for_org(organization_id).filter(agent_links__agent_id=agent_id).order_by("name"))
    if not folders:
        return ""
    agent = Agent.objects.for_org(organization_id).only("context_window").get(pk=agent_id)
    limits = file_limits(agent)
    files = list(FileAgent.objects.for_org(organization_id).filter(agent_id=agent_id).order_by("file_name", "pk"))
    opened = sum(1 for row in files if row.is_open)
    out = [
        "<directories>",
        "<file_limits>",
        f"- current_files_open={opened}",
        f"- max_files_open={limits.max_files_open}",
        "</file_limits>",
    ]
    for folder in folders:
        out.append(f'<directory name="{folder.name}">')
        if folder.description:
            out.append(f"<description>{folder.description}</description>")
        if folder.instructions:
            out.append(f"<instructions>{folder.instructions}</instructions>")
        for row in files:
            if row.folder_id == folder.pk:
                out.extend(_file(row, limits.per_file_chars))
        out.append("</directory>")
    out.append("</directories>")
    return "\n".join(out)


# Without a folder link the section is empty: the memory's query checks for one, and asks only then.
directories_section.attached_via = "folders.FolderAgent"  # type: ignore[attr-defined]


def _file(row: FileAgent, limit: int) -> list[str]:
    value = row.visible_content if row.is_open else ""
    lines = [
        f'<file status="{"open" if row.is_open else "closed"}" name="{row.file_name}">',
        "<metadata>",
        "- read_only=true",
        f"- chars_current={len(value)}",
        f"- chars_limit={limit}",
        "</metadata>",
    ]
    if row.is_open:
        lines += ["<value>", value, "</value>"]
    lines.append("</file>")
    return lines
