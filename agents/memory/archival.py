"""Archival memory: insert, delete and hybrid search over the passages of archives.

An agent's inserts go to its own archive (``agents.memory.archives.own_archive``); its searches
span its own archive and every attached one. Each passage is embedded with its archive's
embedding handle, and a query is embedded once per handle among the passages searched, each
vector compared only with passages of its own handle.

Search is full text always (``passage_text_ranking``: Postgres ``ts_rank`` over the GIN
index of migration 0004; SQLite ``bm25`` over the FTS5 table of migration 0008, both
stemming English words) plus vector similarity when the agent
has an embedding model we can run: the offline ``demo`` embedding (hashed bag of words,
``DEMO_DIMENSIONS`` dimensions, unit length), or the agent's own embedding handle at one of its
organization's (or the server's) providers. Similarity (``passage_vector_ranking``) runs
in pgvector over an HNSW index where the database has the extension (migration 0009),
and is otherwise an exact cosine over the agent's passages in Python (SQLite, and
Postgres without pgvector, CI's path). The two rankings are fused by reciprocal rank.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from agents.errors import ValidationFailed
from agents.llm.embeddings import EmbeddingFailed, embedding_function
from agents.memory.archives import agent_passages, own_archive
from agents.memory.selectors import any_of, has_tag
from agents.models import Agent, Archive, Passage

if TYPE_CHECKING:
    from accounts.models import Organization

logger = logging.getLogger(__name__)
Embed = Callable[[str], "list[float] | None"]
EmbedBatch = Callable[[Sequence[str]], "list[list[float] | None]"]

DEMO_DIMENSIONS = 256
DEFAULT_TOP_K = 10
FTS_CONFIG = "english"
_CANDIDATES = 200
_RRF_K = 60
_MAX_HANDLES = 4  # embedding handles a query is embedded with, at most
_WORD = re.compile(r"\w+", re.UNICODE)
_PGVECTOR: dict[tuple[str, str], bool] = {}
PASSAGE_FTS_TABLE = "agents_passage_fts"  # SQLite only: created and kept in step by migration 0008


# --- embeddings ---------------------------------------------------------------------------


def demo_embedding(text: str) -> list[float]:
    """A deterministic offline embedding: each word hashed into one of 256 signed buckets, normalized."""
    vector = [0.0] * DEMO_DIMENSIONS
    for word in _WORD.findall(text.casefold()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % DEMO_DIMENSIONS
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    return [round(value / norm, 6) for value in vector] if norm else vector


def embedder_for(handle: str, organization: Organization | None = None) -> Embed | None:
    """The embedding function for an agent's own embedding handle, or ``None`` when we have none to run.

    ``demo/…`` is the offline embedding; any other handle resolves through the organization's
    providers, then the server's (``agents.llm.embeddings``). A provider that fails to embed
    leaves that text without a vector (logged): full-text search still finds it.
    """
    batch = batch_embedder_for(handle, organization)
    if batch is None:
        return None
    return lambda text: batch([text])[0]


def batch_embedder_for(handle: str, organization: Organization | None = None) -> EmbedBatch | None:
    """As ``embedder_for``, for many texts at once: one provider request a batch (a file's chunks).

    A batch the provider fails to embed leaves each of its texts without a vector (logged).
    """
    provider, _, _model = (handle or "").partition("/")
    if provider == "demo":
        return lambda texts: [demo_embedding(text) for text in texts]
    remote = embedding_function(handle, organization=organization)
    if remote is None:
        return None

    def embed(texts: Sequence[str]) -> list[list[float] | None]:
        try:
            return list(remote(texts))
        except EmbeddingFailed as exc:
            logger.warning("No embeddings for %d texts: %s", len(texts), exc)
            return [None] * len(texts)

    return embed


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


# --- writes -------------------------------------------------------------------------------


def passage_insert(
    *, agent: Agent, text: str, tags: Sequence[str] | None = None, created_at: datetime | None = None
) -> list[Passage]:
    """Store ``text`` as one passage of the agent's own archive (made on first use)."""
    archive = own_archive(agent)
    return [archive_passage_insert(archive=archive, agent=agent, text=text, tags=tags, created_at=created_at)]


def archive_passage_insert(
    *,
    archive: Archive,
    text: str,
    agent: Agent | None = None,
    tags: Sequence[str] | None = None,
    metadata: dict[str, Any] | None = None,
    created_at: datetime | None = None,
) -> Passage:
    """Store ``text`` in ``archive``, embedded with the archive's embedding handle when we can run it.

    The text is embedded before the transaction opens: a provider's answer never holds the database.
    """
    if not text or not text.strip():
        raise ValidationFailed([{"loc": ["body", "text"], "msg": "Text may not be blank", "type": "value_error"}])
    embed = embedder_for(archive.embedding, archive.organization)
    vector = embed(text) if embed else None
    with transaction.atomic():
        return Passage.objects.create(
            organization_id=archive.organization_id,
            archive=archive,
            agent=agent,
            text=text,
            tags=list(dict.fromkeys(tags or [])),
            metadata=dict(metadata or {}),
            embedding=vector,
            embedding_model=archive.embedding if vector is not None else "",
            created_at=created_at or timezone.now(),
        )


@transaction.atomic
def passage_delete(*, passage: Passage) -> None:
    passage.delete()


def passage_count(*, agent: Agent) -> int:
    """How many passages the agent's archives hold (its own and the attached ones)."""
    return agent_passages(agent).count()


# --- search -------------------------------------------------------------------------------


def words(query: str) -> list[str]:
    return list(dict.fromkeys(word.casefold() for word in _WORD.findall(query or "")))


def postgres_text_matches(rows: QuerySet[Any], fields: Sequence[Any], query_words: list[str]) -> QuerySet[Any]:
    """``rows`` matching any of the words, best ``ts_rank`` (``rank``) first.

    ``fields`` must be the expressions of one of migration 0004's GIN indexes, so it is used.
    """
    search = SearchQuery(query_words[0], config=FTS_CONFIG)
    for word in query_words[1:]:
        search |= SearchQuery(word, config=FTS_CONFIG)
    vector = SearchVector(*fields, config=FTS_CONFIG)
    # django-stubs' plugin types ``annotate`` on a ``QuerySet[Any]`` as ``Any``.
    matches: QuerySet[Any] = (
        rows.annotate(document=vector, rank=SearchRank(vector, search))
        .filter(document=search)
        .order_by("-rank", "-created_at")
    )
    return matches


def postgres_text_ranking(rows: QuerySet[Any], fields: Sequence[Any], query_words: list[str], limit: int) -> list[Any]:
    """Primary keys of the best ``limit`` full-text matches."""
    return list(postgres_text_matches(rows, fields, query_words).values_list("pk", flat=True)[:limit])


def fts_query(query_words: Sequence[str]) -> str:
    """An FTS5 query matching any of the words (each quoted, so none is read as an operator)."""
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in query_words)


def sqlite_passage_ranking(rows: QuerySet[Passage], query_words: list[str], limit: int) -> list[Any]:
    """Primary keys of the best ``limit`` FTS5 matches among ``rows``, best ``bm25`` first, newest first on ties."""
    inner, params = rows.values("pk").query.sql_with_params()
    sql = (
        f"SELECT p.id FROM {PASSAGE_FTS_TABLE} f JOIN agents_passage p ON p.id = f.passage_id "
        f"WHERE {PASSAGE_FTS_TABLE} MATCH %s AND p.id IN ({inner}) "
        f"ORDER BY bm25({PASSAGE_FTS_TABLE}), p.created_at DESC LIMIT %s"
    )
    pk = Passage._meta.pk
    assert pk is not None
    with connection.cursor() as cursor:
        cursor.execute(sql, [fts_query(query_words), *params, limit])
        return [pk.to_python(value) for (value,) in cursor.fetchall()]


def passage_text_ranking(rows: QuerySet[Passage], query_words: list[str], limit: int) -> list[Any]:
    """The one full-text search of passages: primary keys of the best ``limit`` matches among ``rows``."""
    if connection.vendor == "postgresql":
        return postgres_text_ranking(rows, ["text"], query_words, limit)
    return sqlite_passage_ranking(rows, query_words, limit)


def has_pgvector() -> bool:
    """Whether this database holds the ``embedding_vector`` column of migration 0009 (pgvector installed)."""
    if connection.vendor != "postgresql":
        return False
    key = (connection.alias, str(connection.settings_dict.get("NAME")))
    if key not in _PGVECTOR:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM information_schema.columns "
                "WHERE table_name = 'agents_passage' AND column_name = 'embedding_vector'"
            )
            _PGVECTOR[key] = cursor.fetchone() is not None
    return _PGVECTOR[key]


def pgvector_ranking(rows: QuerySet[Passage], wanted: Sequence[float], limit: int) -> list[Any]:
    """Primary keys of the ``limit`` passages among ``rows`` nearest ``wanted`` by cosine, in pgvector.

    Rows of the query's size are compared as ``vector(size)``: the expression of that size's HNSW
    index (migration 0009), so the planner can use it. Only positive similarities count, as in
    ``exact_vector_ranking``.
    """
    inner, params = rows.values("pk").query.sql_with_params()
    size = len(wanted)
    distance = f"embedding_vector::vector({size}) <=> %s::vector({size})"
    literal = "[" + ",".join(repr(float(value)) for value in wanted) + "]"
    sql = (
        f"SELECT id FROM agents_passage WHERE id IN ({inner}) AND vector_dims(embedding_vector) = {size} "
        f"AND {distance} < 1 ORDER BY {distance} LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, literal, literal, limit])
        return [pk for (pk,) in cursor.fetchall()]


def exact_vector_ranking(rows: QuerySet[Passage], wanted: Sequence[float], limit: int) -> list[Any]:
    """Primary keys of the ``limit`` passages among ``rows`` nearest ``wanted``: an exact cosine over them all."""
    scored = [
        (cosine(wanted, vector), pk)
        for pk, vector in rows.filter(embedding__isnull=False).values_list("pk", "embedding").iterator(chunk_size=1000)
        if vector
    ]
    scored.sort(key=lambda item: -item[0])
    return [pk for score, pk in scored[:limit] if score > 0]


def passage_vector_ranking(rows: QuerySet[Passage], wanted: Sequence[float], limit: int) -> list[Any]:
    """The one similarity search of passages: pgvector where the database has it, else the exact cosine."""
    if not any(wanted):
        return []
    if has_pgvector():
        return pgvector_ranking(rows, wanted, limit)
    return exact_vector_ranking(rows, wanted, limit)


def passage_search(
    *,
    agent: Agent,
    query: str,
    tags: Sequence[str] = (),
    tag_match_mode: Literal["any", "all"] = "any",
    top_k: int | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> list[Passage]:
    """The passages of the agent's archives best matching ``query`` (text and, when embedded, meaning), best first.

    An empty query lists the newest passages that pass the tag and date filters.
    """
    return rows_search(
        agent_passages(agent),
        organization=agent.organization,
        query=query,
        tags=tags,
        tag_match_mode=tag_match_mode,
        limit=top_k if top_k and top_k > 0 else DEFAULT_TOP_K,
        start=start,
        end=end,
    )


def rows_search(
    rows: QuerySet[Passage],
    *,
    organization: Organization | None,
    query: str | None,
    tags: Sequence[str] = (),
    tag_match_mode: Literal["any", "all"] = "any",
    limit: int = DEFAULT_TOP_K,
    start: datetime | None = None,
    end: datetime | None = None,
) -> list[Passage]:
    """The best ``limit`` of ``rows`` for ``query``: full text fused with similarity per embedding handle."""
    if start is not None:
        rows = rows.filter(created_at__gte=start)
    if end is not None:
        rows = rows.filter(created_at__lte=end)
    if tags:
        conditions = [has_tag(Passage, tag) for tag in tags]
        if tag_match_mode == "all":
            for condition in conditions:
                rows = rows.filter(condition)
        else:
            rows = rows.filter(any_of(conditions))
    query_words = words(query or "")
    if not query_words:
        return list(rows.order_by("-created_at", "-pk")[:limit])

    rankings: list[list[Any]] = [passage_text_ranking(rows, query_words, _CANDIDATES)]
    handles = rows.exclude(embedding_model="").order_by().values_list("embedding_model", flat=True).distinct()
    for handle in list(handles)[:_MAX_HANDLES]:
        embed = embedder_for(handle, organization)
        wanted = embed(query or "") if embed is not None else None
        if wanted is not None:
            rankings.append(passage_vector_ranking(rows.filter(embedding_model=handle), wanted, _CANDIDATES))

    fused: dict[Any, float] = {}
    for ranking in rankings:
        for rank, pk in enumerate(ranking):
            fused[pk] = fused.get(pk, 0.0) + 1.0 / (_RRF_K + rank + 1)
    best = sorted(fused, key=lambda pk: -fused[pk])[:limit]
    found = Passage.objects.in_bulk(best)
    return [found[pk] for pk in best if pk in found]


def search_result(passage: Passage) -> dict[str, Any]:
    """One hit as Letta's ``ArchivalMemorySearchResult``."""
    return {
        "timestamp": passage.created_at.astimezone(UTC).isoformat(timespec="seconds"),
        "content": passage.text,
        "tags": list(passage.tags or []),
    }
