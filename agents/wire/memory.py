"""Blocks, an agent's memory and passages as Letta's wire JSON (``Block``, ``Memory``, ``Passage``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agents.memory.selectors import agent_blocks

if TYPE_CHECKING:
    from agents.models import Agent, Block, Passage

AGENT_TYPE = "letta_v1_agent"


def _timestamp(value: datetime | None) -> str | None:
    """A resource timestamp as Letta writes it: UTC ISO 8601 with a ``Z``."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def block_json(block: Block) -> dict[str, Any]:
    """Letta's ``Block``."""
    return {
        "value": block.value,
        "limit": block.limit,
        "project_id": None,
        "template_name": None,
        "is_template": False,
        "template_id": None,
        "base_template_id": None,
        "deployment_id": None,
        "entity_id": None,
        "preserve_on_migration": False,
        "label": block.label,
        "read_only": block.read_only,
        "description": block.description or None,
        "metadata": dict(block.metadata or {}),
        "hidden": None,
        "tags": list(block.tags or []),
        "id": block.public_id,
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": _timestamp(block.created_at),
        "updated_at": _timestamp(block.updated_at),
    }


def blocks_json(agent: Agent) -> list[dict[str, Any]]:
    """The agent's blocks in prompt order (``AgentState.blocks``)."""
    return [block_json(block) for block in agent_blocks(agent)]


def memory_json(agent: Agent, blocks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Letta's ``Memory`` of an agent (``AgentState.memory``)."""
    return {
        "agent_type": AGENT_TYPE,
        "blocks": blocks if blocks is not None else blocks_json(agent),
        "file_blocks": [],
        "prompt_template": "",
    }


def passage_json(passage: Passage) -> dict[str, Any]:
    """Letta's ``Passage`` (the embedding itself is left out: it is large and clients rarely need it)."""
    return {
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": _timestamp(passage.created_at),
        "updated_at": _timestamp(passage.updated_at),
        "is_deleted": False,
        "archive_id": None,
        "source_id": None,
        "file_id": None,
        "file_name": None,
        "metadata": dict(passage.metadata or {}),
        "tags": list(passage.tags or []),
        "id": passage.public_id,
        "text": passage.text,
        "embedding": None,
        "embedding_config": None,
        "agent_id": f"agent-{passage.agent_id}",
    }
