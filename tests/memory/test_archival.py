"""Archival memory: the tools, hybrid search (full text plus the demo embedding) and scoping."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from agents import services
from agents.memory.archival import cosine, demo_embedding, passage_delete, passage_insert, passage_search
from agents.models import Agent, Passage
from tests.factories import OrganizationFactory
from tests.memory.tool_calls import call

pytestmark = pytest.mark.django_db(transaction=True)


def make_agent(embedding: str = "demo/hashed-256") -> Agent:
    return services.agent_create(organization=OrganizationFactory(), name="archivist", embedding=embedding)


def test_the_demo_embedding_is_deterministic_unit_length_and_closer_for_shared_words() -> None:
    tea = demo_embedding("Alice drinks green tea")

    assert tea == demo_embedding("Alice drinks green tea")
    assert len(tea) == 256
    assert abs(sum(v * v for v in tea) - 1) < 1e-3
    assert cosine(tea, demo_embedding("green tea")) > cosine(tea, demo_embedding("quarterly revenue report"))


def test_the_insert_tool_stores_an_embedded_passage_and_search_finds_it() -> None:
    agent = make_agent()

    inserted = call(agent, "archival_memory_insert", content="Alice's cat is called Dinah.", tags=["pets"])
    found = call(agent, "archival_memory_search", query="cat name")

    assert (inserted.status, inserted.tool_return) == ("success", "None")
    passage = Passage.objects.get(agent=agent)
    assert passage.tags == ["pets"] and len(passage.embedding) == 256
    results = json.loads(found.tool_return)
    assert [(r["content"], r["tags"]) for r in results] == [("Alice's cat is called Dinah.", ["pets"])]


def test_the_search_tool_filters_by_tags_and_says_when_nothing_matches() -> None:
    agent = make_agent()
    call(agent, "archival_memory_insert", content="tea at five", tags=["habit"])
    call(agent, "archival_memory_insert", content="tea is green", tags=["fact"])

    tagged = json.loads(call(agent, "archival_memory_search", query="tea", tags=["fact"]).tool_return)
    nothing = call(agent, "archival_memory_search", query="volcano")

    assert [r["content"] for r in tagged] == ["tea is green"]
    assert nothing.tool_return == "No results found."


def test_vector_similarity_finds_a_passage_that_shares_no_exact_phrase_with_full_text_ranked_first() -> None:
    agent = make_agent()
    passage_insert(agent=agent, text="Budget meeting moved to Thursday")
    passage_insert(agent=agent, text="Alice prefers green tea in the morning")
    passage_insert(agent=agent, text="Meeting notes: tea was served")

    found = [p.text for p in passage_search(agent=agent, query="green tea morning", top_k=3)]

    assert found[0] == "Alice prefers green tea in the morning"
    assert "Meeting notes: tea was served" in found


def test_without_an_embedding_model_search_is_full_text_only() -> None:
    agent = make_agent("openai/text-embedding-3-small")
    passage_insert(agent=agent, text="Alice prefers green tea")
    passage_insert(agent=agent, text="Nothing related")

    assert Passage.objects.filter(agent=agent, embedding__isnull=True).count() == 2
    assert [p.text for p in passage_search(agent=agent, query="tea")] == ["Alice prefers green tea"]


def test_search_never_returns_another_agents_passages() -> None:
    mine, theirs = make_agent(), make_agent()
    passage_insert(agent=theirs, text="their secret tea recipe")

    assert passage_search(agent=mine, query="secret tea recipe") == []
    assert call(mine, "archival_memory_search", query="secret").tool_return == "No results found."


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the GIN indexes exist on Postgres only")
def test_full_text_search_uses_the_gin_indexes_on_postgres() -> None:
    from agents.memory.archival import postgres_text_matches
    from agents.memory.recall import MESSAGE_TEXT
    from agents.models import Message

    # Over the whole table, so the planner has no per-agent index to prefer: the expressions must match.
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            passages = postgres_text_matches(Passage.objects.all(), ["text"], ["tea", "green"]).explain()
            messages = postgres_text_matches(Message.objects.all(), MESSAGE_TEXT, ["tea"]).explain()
        finally:
            cursor.execute("SET enable_seqscan = on")

    assert "passage_text_fts" in passages
    assert "message_content_fts" in messages


def test_full_text_ranks_passages_with_more_of_the_words_first_and_matches_word_forms() -> None:
    agent = make_agent(embedding="")
    passage_insert(agent=agent, text="The night is dark and long")
    passage_insert(agent=agent, text="Owls hunt at night")
    passage_insert(agent=agent, text="Cats sleep all day")

    found = [p.text for p in passage_search(agent=agent, query="owl hunting nights")]

    assert found == ["Owls hunt at night", "The night is dark and long"]


def test_full_text_follows_edits_and_deletes_of_passages() -> None:
    agent = make_agent(embedding="")
    [kept] = passage_insert(agent=agent, text="Alice plays the violin")
    [gone] = passage_insert(agent=agent, text="Alice plays chess")

    Passage.objects.filter(pk=kept.pk).update(text="Alice plays the cello")
    passage_delete(passage=gone)

    assert passage_search(agent=agent, query="violin") == []
    assert passage_search(agent=agent, query="chess") == []
    assert [p.pk for p in passage_search(agent=agent, query="cello")] == [kept.pk]


def test_full_text_applies_the_tag_and_date_filters_before_ranking() -> None:
    agent = make_agent(embedding="")
    passage_insert(agent=agent, text="tea tea tea", tags=["drinks"])
    [tagged] = passage_insert(agent=agent, text="green tea", tags=["favourites"])

    found = passage_search(agent=agent, query="tea", tags=["favourites"], top_k=1)

    assert [p.pk for p in found] == [tagged.pk]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 table exists on SQLite only")
def test_the_fts5_table_and_its_triggers_exist_after_every_migration() -> None:
    # A later migration that rebuilds agents_passage on SQLite drops its triggers: this test says so.
    with connection.cursor() as cursor:
        cursor.execute("SELECT type, name FROM sqlite_master WHERE name LIKE 'agents_passage_fts%'")
        found = set(cursor.fetchall())

    assert {
        ("table", "agents_passage_fts"),
        ("trigger", "agents_passage_fts_insert"),
        ("trigger", "agents_passage_fts_delete"),
        ("trigger", "agents_passage_fts_update"),
    } <= found
