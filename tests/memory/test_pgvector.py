"""Archival vectors in pgvector: migration 0009 and ``pgvector_ranking`` on a real Postgres with the extension.

The Postgres of the test run (Debian 12's 15, as in CI) has no pgvector, so this starts
one that does: ``pgserver`` (a pip-installable Postgres 16 bundling pgvector). The
server migrates it as a deployment would and runs the search through ``manage.py shell``.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_server import run_manage, server_env

pytestmark = pytest.mark.timeout(300)

PROBE = """
import json
from django.db import connection
from accounts.models import Organization
from agents import services
from agents.memory.archival import has_pgvector, passage_insert, passage_search, pgvector_ranking, demo_embedding
from agents.models import Passage

org = Organization.objects.create(name="vectors")
agent = services.agent_create(organization=org, name="archivist", embedding="demo/hashed-256")
other = services.agent_create(organization=org, name="other", embedding="demo/hashed-256")
texts = ["Alice drinks green tea every morning", "Bob rides a red bicycle", "The cat sleeps on the sofa"]
for text in texts:
    passage_insert(agent=agent, text=text)
passage_insert(agent=other, text="Alice drinks green tea every morning too")
with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM agents_passage WHERE embedding_vector IS NOT NULL")
    vectors = cursor.fetchone()[0]
    cursor.execute("SET enable_seqscan = off")
    inner = Passage.objects.all().values("pk").query.sql_with_params()
    cursor.execute(
        "EXPLAIN SELECT id FROM agents_passage WHERE vector_dims(embedding_vector) = 256 "
        "ORDER BY embedding_vector::vector(256) <=> %s::vector(256) LIMIT 5",
        [str(demo_embedding("morning tea"))],
    )
    plan = "\\n".join(row[0] for row in cursor.fetchall())
    cursor.execute("SET enable_seqscan = on")
rows = Passage.objects.filter(agent=agent)
nearest = pgvector_ranking(rows, demo_embedding("green tea drinker"), 10)
print(json.dumps({
    "has_pgvector": has_pgvector(),
    "vectors": vectors,
    "plan": plan,
    "nearest": [Passage.objects.get(pk=pk).text for pk in nearest],
    "search": [p.text for p in passage_search(agent=agent, query="bicycle")],
    "hybrid": [p.text for p in passage_search(agent=agent, query="morning tea")][:1],
}))
"""


@pytest.fixture(scope="module")
def pgvector_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    pgserver = pytest.importorskip(
        "pgserver", reason="pgserver (a pip-installable Postgres with pgvector) is not installed"
    )
    folder = tmp_path_factory.mktemp("pgvector")
    try:
        server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
    except Exception as exc:  # a platform without its binaries, or no shared memory: say so, do not pass
        pytest.skip(f"pgserver could not start a Postgres here: {exc}")
    socket_dir = urllib.parse.parse_qs(urllib.parse.urlparse(server.get_uri()).query)["host"][0]
    server.psql("CREATE DATABASE agentserver_vectors;")
    # A path as the database name: django-environ takes its folder as the socket directory.
    url = "postgres://postgres@/" + urllib.parse.quote(f"{socket_dir}/agentserver_vectors", safe="")
    env = server_env(Path(folder), {"DATABASE_URL": url})
    run_manage(env, "migrate", "--noinput")
    yield env
    server.cleanup()


@pytest.fixture(scope="module")
def probe(pgvector_env: dict[str, str]) -> dict[str, Any]:
    output = run_manage(pgvector_env, "shell", "-c", PROBE)
    return json.loads(output.strip().splitlines()[-1])


def test_with_pgvector_the_migration_adds_a_vector_kept_in_step_with_each_passage(probe: dict[str, Any]) -> None:
    assert probe["has_pgvector"] is True
    assert probe["vectors"] == 4


def test_the_hnsw_index_of_the_demo_embeddings_size_serves_a_nearest_neighbour_query(probe: dict[str, Any]) -> None:
    assert "passage_embedding_hnsw_256" in probe["plan"], probe["plan"]


def test_pgvector_search_finds_the_nearest_passages_of_the_agent_only(probe: dict[str, Any]) -> None:
    assert probe["nearest"][0] == "Alice drinks green tea every morning"
    assert "Alice drinks green tea every morning too" not in probe["nearest"]
    assert probe["search"][0] == "Bob rides a red bicycle"
    assert probe["hybrid"] == ["Alice drinks green tea every morning"]
