"""Blocks and an agent's memory as Letta's wire JSON (``Block``, ``Memory``); passages are in ``archives``.

The caller reads the blocks (``agents.memory.selectors.agent_blocks``, in prompt order) and passes them in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from agents.wire.values import DateTime, letta_timestamp

if TYPE_CHECKING:
    from collections.abc import Iterable

    from agents.models import Block as BlockRow

AGENT_TYPE = "letta_v1_agent"


class Block(TypedDict):
    value: str
    limit: int
    project_id: str | None
    template_name: str | None
    is_template: bool
    template_id: str | None
    base_template_id: str | None
    deployment_id: str | None
    entity_id: str | None
    preserve_on_migration: bool
    label: str
    read_only: bool
    description: str | None
    metadata: dict[str, Any]
    hidden: bool | None
    tags: list[str]
    id: str
    created_by_id: str | None
    last_updated_by_id: str | None
    created_at: DateTime | None
    updated_at: DateTime | None


class Memory(TypedDict):
    agent_type: str
    blocks: list[Block]
    file_blocks: list[dict[str, Any]]
    prompt_template: str


class ArchivalSearchResult(TypedDict):
    """Letta's ``ArchivalMemorySearchResult``: one hit (``agents.memory.archival.search_result``)."""

    timestamp: DateTime
    content: str
    tags: list[str]


def block_json(block: BlockRow) -> Block:
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
        "created_at": letta_timestamp(block.created_at),
        "updated_at": letta_timestamp(block.updated_at),
    }


def blocks_json(blocks: Iterable[BlockRow]) -> list[Block]:
    """An agent's blocks, in the order given (prompt order for ``AgentState.blocks``)."""
    return [block_json(block) for block in blocks]


def memory_json(blocks: list[Block]) -> Memory:
    """Letta's ``Memory`` of an agent (``AgentState.memory``), of its rendered blocks."""
    return {"agent_type": AGENT_TYPE, "blocks": blocks, "file_blocks": [], "prompt_template": ""}
