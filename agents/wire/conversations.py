"""Letta's ``Conversation`` object (``letta@0.16.8:letta/schemas/conversation.py``) of a row.

``in_context_message_ids`` is filled only by retrieve, as Letta does: the caller passes the
ids it read; every other answer gives ``[]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from agents.wire.values import DateTime, letta_timestamp, public_id

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agents.models import Conversation as ConversationRow


class Conversation(TypedDict):
    created_by_id: str | None
    last_updated_by_id: str | None
    created_at: DateTime | None
    updated_at: DateTime | None
    id: str
    agent_id: str
    summary: str | None
    description: str | None
    in_context_message_ids: list[str]
    isolated_block_ids: list[str]
    model: str | None
    model_settings: dict[str, Any] | None
    last_message_at: DateTime | None


class CompactionAnswer(TypedDict):
    summary: str
    num_messages_before: int
    num_messages_after: int


def conversation_json(
    row: ConversationRow,
    *,
    isolated_block_ids: Sequence[Any] = (),
    in_context_message_ids: Sequence[Any] = (),
) -> Conversation:
    """The wire object of ``row``; the isolated blocks and in-context ids are given by the caller."""
    return {
        "created_by_id": public_id("user", row.created_by_id),
        "last_updated_by_id": public_id("user", row.last_updated_by_id),
        "created_at": letta_timestamp(row.created_at),
        "updated_at": letta_timestamp(row.updated_at),
        "id": row.public_id,
        "agent_id": f"agent-{row.agent_id}",
        "summary": row.summary or None,
        "description": row.description or None,
        "in_context_message_ids": [f"message-{pk}" for pk in in_context_message_ids],
        "isolated_block_ids": [f"block-{pk}" for pk in isolated_block_ids],
        "model": row.model or None,
        "model_settings": row.model_settings,
        "last_message_at": letta_timestamp(row.last_message_at),
    }
