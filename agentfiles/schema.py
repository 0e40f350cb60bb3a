"""The Agent File (``.af``) document: reading every version Letta wrote into one shape.

Two generations exist (LETTA_PLATFORM.md §1): the legacy v1 file (≤ 0.7.x), whose top level
*is* one agent with its blocks, tools and messages inline, and the v2 ``AgentFileSchema``
(``agents``, ``blocks``, ``tools``, … keyed by file-local ids such as ``tool-3``). Some v2
files are double-encoded: a JSON string whose content is the document.

``read_document`` turns the bytes into a ``Document``: always the v2 shape, with v1 files
converted (ids assigned in order, tags and environment variables in v2's form), and the
references between entries checked. Anything else is an ``AgentFileError`` (a 400) saying
what is wrong.
"""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import TypedDict

from core.errors import ApplicationError

LISTS = ("agents", "groups", "blocks", "files", "sources", "tools", "mcp_servers")


class AgentFileError(ApplicationError):
    """The file cannot be imported (400); the message says why."""

    status_code = 400


class Document(TypedDict):
    """A v2 agent file (``AgentFileSchema``); entries are Letta's dicts, as in the file."""

    agents: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    blocks: list[dict[str, Any]]
    files: list[dict[str, Any]]
    sources: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    mcp_servers: list[dict[str, Any]]
    skills: list[dict[str, Any]]
    metadata: dict[str, str]
    created_at: str | None


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one (real files have nulls where objects go)."""
    return value if isinstance(value, dict) else {}


def read_document(raw: bytes) -> Document:
    """The document in ``raw`` (v1, v2 or double-encoded v2), checked; ``AgentFileError`` if it is none."""
    try:
        data: Any = json.loads(raw)
        if isinstance(data, str):  # double-encoded: a JSON string holding the document
            data = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AgentFileError(f"Corrupted agent file format: the file is not JSON ({exc}).") from exc
    if not isinstance(data, dict):
        raise AgentFileError("Corrupted agent file format: the file is not a JSON object.")
    if "agents" not in data and isinstance(data.get("core_memory"), list) and "llm_config" in data:
        data = _from_v1(data)
    return _checked(data)


def _checked(data: dict[str, Any]) -> Document:
    if not isinstance(data.get("agents"), list):
        version = data.get("version")
        named = f" ({version!r})" if isinstance(version, str) else ""
        raise AgentFileError(
            f"Unknown agent file version{named}: expected a v2 file with an 'agents' list, "
            "or a legacy v1 file with 'core_memory' and 'llm_config'."
        )
    for key in LISTS:
        if not isinstance(data.get(key, []), list) or any(not isinstance(e, dict) for e in data.get(key, [])):
            raise AgentFileError(f"Schema validation failed: '{key}' must be a list of objects.")
    if not data["agents"]:
        raise AgentFileError("Schema validation failed: the file has no agents.")
    document = Document(
        agents=data["agents"],
        groups=data.get("groups") or [],
        blocks=data.get("blocks") or [],
        files=data.get("files") or [],
        sources=data.get("sources") or [],
        tools=data.get("tools") or [],
        mcp_servers=data.get("mcp_servers") or [],
        skills=data.get("skills") or [],
        metadata=mapping(data.get("metadata")),
        created_at=data.get("created_at") if isinstance(data.get("created_at"), str) else None,
    )
    problems = _reference_problems(document)
    if problems:
        raise AgentFileError(f"Schema validation failed: {'; '.join(problems[:10])}")
    return document


def _ids(entries: list[dict[str, Any]], kind: str, problems: list[str]) -> set[str]:
    ids: list[str] = []
    for index, entry in enumerate(entries):
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or not entry_id:
            problems.append(f"{kind} #{index} has no id")
            continue
        ids.append(entry_id)
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        problems.append(f"Duplicate {kind} IDs found: {', '.join(duplicates)}")
    return set(ids)


def _reference_problems(document: Document) -> list[str]:
    problems: list[str] = []
    tools = _ids(document["tools"], "tools", problems)
    blocks = _ids(document["blocks"], "blocks", problems)
    _ids(document["agents"], "agents", problems)
    for index, tool in enumerate(document["tools"]):
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            problems.append(f"tool #{index} has no name")
    for index, block in enumerate(document["blocks"]):
        if not isinstance(block.get("label"), str) or not block["label"]:
            problems.append(f"block #{index} has no label")
        if not isinstance(block.get("value", ""), str):
            problems.append(f"block {block.get('label')!r} has a value that is not text")
    for agent in document["agents"]:
        name = agent.get("id")
        for key, known in (("tool_ids", tools), ("block_ids", blocks)):
            value = agent.get(key) or []
            if not isinstance(value, list):
                problems.append(f"agent {name}: '{key}' must be a list")
                continue
            problems.extend(f"agent {name} references non-existent {key[:-4]} {i}" for i in value if i not in known)
        messages = agent.get("messages") or []
        if not isinstance(messages, list) or any(not isinstance(m, dict) for m in messages):
            problems.append(f"agent {name}: 'messages' must be a list of objects")
            continue
        message_ids = _ids(messages, "messages", problems)
        in_context = agent.get("in_context_message_ids") or []
        if not isinstance(in_context, list):
            problems.append(f"agent {name}: 'in_context_message_ids' must be a list")
            continue
        problems.extend(
            f"agent {name} has an in-context message {i} that is not among its messages"
            for i in in_context
            if i not in message_ids
        )
    return problems


# --- v1 (legacy, ≤ 0.7.x) -------------------------------------------------------------------


def _v1_secrets(value: Any) -> dict[str, str]:
    """v1's ``[{key, value, …}]`` (or a dict) as v2's ``{key: value}``."""
    if isinstance(value, dict):
        return {str(k): str(v or "") for k, v in value.items()}
    if isinstance(value, list):
        return {
            str(item["key"]): str(item.get("value") or "") for item in value if isinstance(item, dict) and "key" in item
        }
    return {}


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A legacy v1 file (one agent at top level, everything inline) in the v2 shape."""
    blocks = [{**b, "id": f"block-{i}"} for i, b in enumerate(data.get("core_memory") or []) if isinstance(b, dict)]
    tools = [{**t, "id": f"tool-{i}"} for i, t in enumerate(data.get("tools") or []) if isinstance(t, dict)]
    messages = [
        {**m, "id": f"message-{i}", "agent_id": "agent-0"}
        for i, m in enumerate(data.get("messages") or [])
        if isinstance(m, dict)
    ]
    indices = data.get("in_context_message_indices") or []
    in_context = [f"message-{i}" for i in indices if isinstance(i, int) and 0 <= i < len(messages)]
    secrets = _v1_secrets(data.get("tool_exec_environment_variables"))
    agent = {
        "id": "agent-0",
        "name": data.get("name"),
        "description": data.get("description"),
        "system": data.get("system"),
        "agent_type": data.get("agent_type"),
        "llm_config": data.get("llm_config") or {},
        "embedding_config": data.get("embedding_config") or {},
        "metadata": data.get("metadata_") or data.get("metadata"),
        "tags": [t["tag"] if isinstance(t, dict) else t for t in data.get("tags") or []],
        "tool_rules": data.get("tool_rules") or [],
        "message_buffer_autoclear": data.get("message_buffer_autoclear", False),
        "tool_ids": [t["id"] for t in tools],
        "block_ids": [b["id"] for b in blocks],
        "source_ids": [],
        "messages": messages,
        "in_context_message_ids": in_context,
        "secrets": secrets,
        "tool_exec_environment_variables": secrets,
        "files_agents": [],
        "group_ids": [],
    }
    return {
        "agents": [agent],
        "groups": [],
        "blocks": blocks,
        "files": [],
        "sources": [],
        "tools": tools,
        "mcp_servers": [],
        "skills": [],
        "metadata": {"letta_version": str(data.get("version") or "")},
        "created_at": data.get("created_at"),
    }
