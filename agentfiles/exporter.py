"""``GET /v1/agents/{id}/export``: an agent as a v2 agent file Letta 0.16.8 accepts.

File-local ids are ``<prefix>-<n>``, numbered in order of first encounter (tools in
attachment order, blocks in prompt order, messages oldest first); the ``tools`` array is then
sorted by name and ``blocks`` by label, as Letta writes them. Secrets never leave: tool
variables are exported by name only, with empty values. What the agent's import kept (its
folders and files, MCP servers) is written again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils import timezone

from agentfiles.messages import letta_message
from agentfiles.models import ImportedAgent
from agents import selectors
from agents.memory.selectors import agent_blocks
from agents.models import Message
from agents.wire.memory import block_json
from agents.wire.resources import agent_state
from agents.wire.tools import tool_json

if TYPE_CHECKING:
    from agents.models import Agent

# Letta 0.16.8's Alembic head: what its exports write as ``metadata.revision_id``.
REVISION_ID = "1c28e167b74f"
TOOL_FIELDS = (
    "tool_type",
    "description",
    "source_type",
    "name",
    "tags",
    "source_code",
    "json_schema",
    "args_json_schema",
    "return_char_limit",
    "pip_requirements",
    "npm_requirements",
    "default_requires_approval",
    "enable_parallel_execution",
    "created_by_id",
    "last_updated_by_id",
    "metadata_",
)
BLOCK_FIELDS = (
    "label",
    "value",
    "limit",
    "description",
    "read_only",
    "metadata",
    "tags",
    "hidden",
    "project_id",
    "template_name",
    "is_template",
    "template_id",
    "base_template_id",
    "deployment_id",
    "entity_id",
    "preserve_on_migration",
)
# Every ``CreateAgent`` field an export writes empty, as Letta's does.
AGENT_DEFAULTS: dict[str, Any] = {
    "memory_blocks": [],
    "tools": [],
    "folder_ids": None,
    "initial_message_sequence": None,
    "include_base_tools": False,
    "include_multi_agent_tools": False,
    "include_base_tool_rules": False,
    "include_default_source": False,
    "model": None,
    "embedding": None,
    "context_window_limit": None,
    "embedding_chunk_size": None,
    "max_tokens": None,
    "max_reasoning_tokens": None,
    "enable_reasoner": False,
    "reasoning": None,
    "from_template": None,
    "template": False,
    "project": None,
    "memory_variables": None,
    "project_id": None,
    "template_id": None,
    "base_template_id": None,
    "identity_ids": None,
    "message_buffer_autoclear": False,
    "enable_sleeptime": False,
    "hidden": None,
    "parallel_tool_calls": None,
    "max_files_open": 10,
    "per_file_view_window_char_limit": 25000,
    "group_ids": [],
}


def agentfile_export(*, agent: Agent, scrub_messages: bool = False) -> dict[str, Any]:
    """The agent file of ``agent`` (``scrub_messages``: without its messages)."""
    agent_tools = selectors.agent_tool_rows(agent)
    blocks = agent_blocks(agent)
    in_context = [] if scrub_messages else list(Message.objects.in_context(agent).values_list("pk", flat=True))
    state = agent_state(agent, blocks=blocks, agent_tools=agent_tools, message_ids=in_context, pending_approval=None)
    attached = [row.tool for row in agent_tools]
    tool_ids = {tool.pk: f"tool-{n}" for n, tool in enumerate(attached)}
    block_ids = {block.pk: f"block-{n}" for n, block in enumerate(blocks)}
    # The agent's own thread: a conversation's rows have seqs of their own and are not in a Letta file.
    rows = [] if scrub_messages else list(Message.objects.filter(agent=agent, conversation=None).order_by("seq"))
    message_ids = {row.pk: f"message-{n}" for n, row in enumerate(rows)}
    imported = ImportedAgent.objects.filter(agent=agent).select_related("record").first()
    kept = imported.record.kept if imported is not None else {}
    secrets = {key: "" for key in agent.tool_env_vars}
    entry = {
        **AGENT_DEFAULTS,
        "name": state["name"],
        "tool_ids": list(tool_ids.values()),
        "source_ids": list(imported.source_ids) if imported is not None else [],
        "block_ids": list(block_ids.values()),
        "tool_rules": state["tool_rules"],
        "tags": state["tags"],
        "system": state["system"],
        "agent_type": state["agent_type"],
        "llm_config": state["llm_config"],
        "embedding_config": state["embedding_config"],
        "model_settings": state.get("model_settings"),
        "compaction_settings": state.get("compaction_settings"),
        "description": state["description"],
        "metadata": state["metadata"],
        "tool_exec_environment_variables": secrets,
        "secrets": secrets,
        "response_format": state["response_format"],
        "timezone": state["timezone"],
        "id": "agent-0",
        "in_context_message_ids": [message_ids[pk] for pk in in_context if pk in message_ids],
        "messages": [letta_message(row, file_id=message_ids[row.pk], agent_file_id="agent-0") for row in rows],
        "files_agents": list(imported.files_agents) if imported is not None else [],
    }
    return {
        "agents": [entry],
        "groups": [],
        "blocks": sorted(
            ({**_pick(block_json(block), BLOCK_FIELDS), "id": block_ids[block.pk]} for block in blocks),
            key=lambda b: b["label"],
        ),
        "files": _kept_files(kept, entry["source_ids"]),
        "sources": [s for s in kept.get("sources") or [] if s.get("id") in entry["source_ids"]],
        "tools": sorted(
            ({**_pick(tool_json(tool), TOOL_FIELDS), "id": tool_ids[tool.pk], "project_id": None} for tool in attached),
            key=lambda t: t["name"],
        ),
        "mcp_servers": list(kept.get("mcp_servers") or []),
        "skills": [],
        "metadata": {"revision_id": REVISION_ID},
        "created_at": timezone.now().isoformat(),
    }


def _pick(source: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    return {name: source.get(name) for name in fields}


def _kept_files(kept: dict[str, Any], source_ids: list[str]) -> list[dict[str, Any]]:
    return [f for f in kept.get("files") or [] if f.get("source_id") in source_ids]
