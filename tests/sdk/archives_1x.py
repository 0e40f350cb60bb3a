"""Shared archives and passage search through letta-client 1.12, as an integrator calls them (run by ``driver.py``).

``archives.create/list/retrieve/update/delete``, ``archives.passages.create/create_many/delete``,
``agents.archives.attach/detach`` and ``passages.search``; the agents of an archive, which 1.12 has no
method for, through the client's own ``get``. Like the driver, this file imports nothing from the
project: it runs in the SDK's virtualenv. ``ctx`` is the driver's ``Context``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

MODEL = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "demo/hashed-256"


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def archives_create_attach_search_and_delete(ctx: Any) -> None:
    client = ctx.client
    name = f"papers-{uuid.uuid4().hex[:8]}"
    archive = client.archives.create(name=name, description="shared papers", embedding=EMBEDDING)
    check(archive.id.startswith("archive-") and archive.embedding_config.handle == EMBEDDING, f"{archive!r}")
    check([a.id for a in client.archives.list(name=name)] == [archive.id], "listed by name")
    check(client.archives.retrieve(archive.id).description == "shared papers", "retrieved")
    renamed = client.archives.update(archive.id, name=f"{name}-2")
    check(renamed.name == f"{name}-2" and renamed.description == "shared papers", f"{renamed!r}")

    one = client.archives.passages.create(archive.id, text="attention is all you need", tags=["ml"])
    many = client.archives.passages.create_many(
        archive.id, passages=[{"text": "owls hunt at night"}, {"text": "to be or not to be", "metadata": {"p": 1}}]
    )
    check(one.archive_id == archive.id and one.tags == ["ml"], f"{one!r}")
    check([p.text for p in many] == ["owls hunt at night", "to be or not to be"], f"{many!r}")
    client.archives.passages.delete(many[0].id, archive_id=archive.id)

    agent = client.agents.create(name=f"reader-{uuid.uuid4().hex[:6]}", model=MODEL, embedding=EMBEDDING)
    client.agents.archives.attach(archive.id, agent_id=agent.id)
    attached = client.get(f"/v1/archives/{archive.id}/agents", cast_to=object)
    check([a["id"] for a in attached] == [agent.id], f"agents of the archive: {attached}")
    check([a.id for a in client.archives.list(agent_id=agent.id)] == [archive.id], "archives of the agent")

    hits = client.passages.search(agent_id=agent.id, query="attention")
    check([hit.passage.text for hit in hits] == ["attention is all you need"], f"search by agent: {hits}")
    by_archive = client.passages.search(archive_id=archive.id, tags=["ml"], tag_match_mode="all", limit=5)
    check([hit.passage.id for hit in by_archive] == [one.id] and by_archive[0].score == 0.0, f"{by_archive}")
    check(any(hit.passage.text == "to be or not to be" for hit in client.passages.search(query="to be")), "org")

    client.agents.archives.detach(archive.id, agent_id=agent.id)
    check(client.passages.search(agent_id=agent.id, query="attention") == [], "detached: no longer searched")
    client.archives.delete(archive.id)
    check(not list(client.archives.list(name=f"{name}-2")), "deleted archives are not listed")
    client.agents.delete(agent.id)


ARCHIVE_SCENARIOS: dict[str, Callable[[Any], None]] = {
    fn.__name__: fn for fn in (archives_create_attach_search_and_delete,)
}
