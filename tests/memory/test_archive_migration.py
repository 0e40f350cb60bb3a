"""Passages stored before archives existed move into their agents' own archives (agents 0014) and are still found."""

from __future__ import annotations

import pytest
from django.utils import timezone

from agents.memory.archival import demo_embedding, passage_insert, passage_search
from agents.models import Agent, AgentArchive, Passage
from tests.support.migrations import latest_schema_afterwards, migrate  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("latest_schema_afterwards")]

BEFORE = [("agents", "0013_conversations")]


def test_existing_passages_land_in_their_agents_own_archive_and_are_still_found() -> None:
    old = migrate(BEFORE).loader.project_state(BEFORE).apps
    Organization = old.get_model("accounts", "Organization")
    OldAgent = old.get_model("agents", "Agent")
    OldPassage = old.get_model("agents", "Passage")
    org = Organization.objects.create(name="Acme", slug="acme")
    keeper = OldAgent.objects.create(organization=org, name="keeper", embedding="demo/hashed-256")
    idle = OldAgent.objects.create(organization=org, name="idle", embedding="demo/hashed-256")
    texts = ["Alice drinks green tea every morning", "The quarterly revenue report is due Friday"]
    for text in texts:
        OldPassage.objects.create(
            organization=org,
            agent=keeper,
            text=text,
            tags=["kept"],
            embedding=demo_embedding(text),
            embedding_model="demo/hashed-256",
            created_at=timezone.now(),
        )

    migrate()  # through agents 0014 (the move) and 0015 (the archive required), to the latest

    agent = Agent.objects.get(pk=keeper.pk)
    own = AgentArchive.objects.select_related("archive").get(agent=agent, is_owner=True).archive
    assert (own.name, own.embedding, own.organization_id) == ("keeper's Archive", "demo/hashed-256", org.pk)
    assert sorted(Passage.objects.filter(archive=own).values_list("text", flat=True)) == sorted(texts)
    assert not AgentArchive.objects.filter(agent_id=idle.pk).exists()  # no passages, no archive until its first
    found = passage_search(agent=agent, query="who likes tea?")
    assert [passage.text for passage in found][:1] == [texts[0]]
    passage_insert(agent=agent, text="Bob prefers coffee")
    assert Passage.objects.filter(archive=own).count() == 3  # new inserts go to the same archive
