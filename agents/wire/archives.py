"""Archives and their passages as Letta's wire JSON (``Archive``, ``Passage``, ``PassageSearchResult``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import TypedDict

from agents.wire.resources import EmbeddingConfig, embedding_config
from agents.wire.values import DateTime, letta_timestamp

if TYPE_CHECKING:
    from agents.models import Archive as ArchiveRow
    from agents.models import Passage as PassageRow


class Archive(TypedDict):
    id: str
    name: str
    description: str | None
    organization_id: str
    vector_db_provider: Literal["native"]
    embedding_config: EmbeddingConfig | None
    metadata: dict[str, Any]
    created_by_id: str | None
    last_updated_by_id: str | None
    created_at: DateTime | None
    updated_at: DateTime | None


class Passage(TypedDict):
    created_by_id: str | None
    last_updated_by_id: str | None
    created_at: DateTime | None
    updated_at: DateTime | None
    is_deleted: bool
    archive_id: str | None
    source_id: str | None
    file_id: str | None
    file_name: str | None
    metadata: dict[str, Any]
    tags: list[str]
    id: str
    text: str
    embedding: list[float] | None
    """Always ``null``: the vector is large and clients rarely need it."""
    embedding_config: EmbeddingConfig | None
    """The config of the handle that embedded it; ``null`` when it was not embedded."""
    agent_id: str | None
    """The agent whose own archive holds it; ``null`` for a passage added to a shared archive."""


class PassageSearchResult(TypedDict):
    """One hit of ``POST /v1/passages/search``: ``score`` is ``0.0`` and ``metadata`` empty, as on Letta's SQL store."""

    passage: Passage
    score: float
    metadata: dict[str, Any]


def archive_json(archive: ArchiveRow) -> Archive:
    return {
        "id": archive.public_id,
        "name": archive.name,
        "description": archive.description or None,
        "organization_id": f"org-{archive.organization_id}",
        "vector_db_provider": "native",
        "embedding_config": embedding_config(archive.embedding) if archive.embedding else None,
        "metadata": dict(archive.metadata or {}),
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": letta_timestamp(archive.created_at),
        "updated_at": letta_timestamp(archive.updated_at),
    }


def passage_json(passage: PassageRow) -> Passage:
    """Letta's ``Passage`` (the embedding itself is left out: it is large and clients rarely need it)."""
    return {
        "created_by_id": None,
        "last_updated_by_id": None,
        "created_at": letta_timestamp(passage.created_at),
        "updated_at": letta_timestamp(passage.updated_at),
        "is_deleted": False,
        "archive_id": f"archive-{passage.archive_id}",
        "source_id": None,
        "file_id": None,
        "file_name": None,
        "metadata": dict(passage.metadata or {}),
        "tags": list(passage.tags or []),
        "id": passage.public_id,
        "text": passage.text,
        "embedding": None,
        "embedding_config": embedding_config(passage.embedding_model) if passage.embedding_model else None,
        "agent_id": f"agent-{passage.agent_id}" if passage.agent_id else None,
    }


def search_hit_json(passage: PassageRow) -> PassageSearchResult:
    return {"passage": passage_json(passage), "score": 0.0, "metadata": {}}
