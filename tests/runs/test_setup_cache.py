"""A turn's provider, tools and memory section, kept by the process under ``Agent.setup_revision``
(``agents.runs.setup_cache``): read once while nothing changes, read again as soon as anything they
come from changes, whoever changes it (another process's connection here; triggers bump the revision)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.memory.archival import passage_insert
from agents.memory.models import AgentBlock
from agents.models import Agent, Run
from agents.runs.setup_cache import setups
from agents.runs.turns import Prefetched, prefetch
from providers import services as provider_services
from tests.factories import AgentFactory, AgentToolFactory

if TYPE_CHECKING:
    from tests.conftest import Cast

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the revision's triggers are Postgres's"),
]


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    setups.clear()


def reads(agent: Agent) -> tuple[Prefetched, int]:
    """What a turn's start reads ahead for ``agent`` (its row read again, as the start's row lock reads it),
    and how many queries that took."""
    fresh = Agent.objects.select_related("organization").get(pk=agent.pk)
    with CaptureQueriesContext(connection) as captured:
        ahead = prefetch(Run(agent=fresh, organization_id=fresh.organization_id))
    return ahead, len(captured.captured_queries)


def in_another_connection(sql: str, params: tuple[Any, ...]) -> None:
    """Run ``sql`` on a connection of its own, as another process would (committed at once)."""
    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"] or 5432, user=db["USER"], password=db["PASSWORD"], dbname=db["NAME"]
    ) as other:
        other.execute(sql, params)


def test_a_second_turn_reads_nothing_ahead_while_nothing_changed(cast: Cast) -> None:
    agent = AgentToolFactory(agent__organization=cast.org_a).agent
    first, first_queries = reads(agent)

    second, second_queries = reads(agent)

    assert first_queries == 2  # the memory section and the tools (the demo model's client reads nothing)
    assert second_queries == 0
    assert (second.tools, second.memory, second.llm) == (first.tools, first.memory, first.llm)


def test_a_tool_detached_in_another_connection_is_left_out_of_the_next_turn(cast: Cast) -> None:
    link = AgentToolFactory(agent__organization=cast.org_a)
    assert [spec.name for spec in reads(link.agent)[0].tools] == [link.tool.name]

    in_another_connection("DELETE FROM tools_agenttool WHERE id = %s", (link.pk,))

    assert reads(link.agent)[0].tools == []


def test_a_tool_edited_in_another_connection_is_offered_as_edited_in_the_next_turn(cast: Cast) -> None:
    link = AgentToolFactory(agent__organization=cast.org_a)
    reads(link.agent)

    in_another_connection("UPDATE tools_tool SET description = 'Edited.' WHERE id = %s", (link.tool.pk,))
    link.tool.refresh_from_db()

    assert reads(link.agent)[0].tools[0].json_schema == link.tool.json_schema
    assert reads(link.agent)[0].tools[0].name == link.tool.name


def test_a_block_edited_in_another_connection_shows_in_the_next_turns_memory(cast: Cast) -> None:
    agent = AgentFactory(organization=cast.org_a)
    block = AgentBlock.objects.filter(agent=agent).select_related("block").first()
    assert block is not None
    reads(agent)

    in_another_connection("UPDATE agents_block SET value = 'Likes tea.' WHERE id = %s", (block.block_id,))

    assert "Likes tea." in reads(agent)[0].memory


def test_a_memory_added_to_the_archive_is_counted_in_the_next_turns_memory(cast: Cast) -> None:
    agent = AgentFactory(organization=cast.org_a)
    assert "total memories" not in reads(agent)[0].memory

    passage_insert(agent=agent, text="The user likes tea.")

    assert "- 1 total memories you created" in reads(agent)[0].memory


def test_a_provider_key_changed_is_used_by_the_next_turn_and_a_deleted_provider_fails_it(cast: Cast) -> None:
    provider = provider_services.provider_create(
        organization=cast.org_a, name="my-claude", provider_type="anthropic", api_key="sk-ant-old", refresh=False
    )
    agent = AgentFactory(organization=cast.org_a, model="my-claude/claude-sonnet-4-5")
    assert reads(agent)[0].llm.inner.api_key == "sk-ant-old"  # type: ignore[union-attr]

    provider_services.provider_update(provider=provider, api_key="sk-ant-new", refresh=False)
    assert reads(agent)[0].llm.inner.api_key == "sk-ant-new"  # type: ignore[union-attr]

    in_another_connection("DELETE FROM providers_provider WHERE id = %s", (provider.pk,))
    assert isinstance(reads(agent)[0].llm, Exception)


def test_another_agents_change_leaves_this_agents_reads_kept(cast: Cast) -> None:
    agent = AgentFactory(organization=cast.org_a)
    other = AgentToolFactory(agent__organization=cast.org_a)
    reads(agent)

    in_another_connection("DELETE FROM tools_agenttool WHERE id = %s", (other.pk,))

    assert reads(agent)[1] == 0


def test_a_server_key_changed_in_the_settings_is_used_by_the_next_turn(cast: Cast, settings: Any) -> None:
    settings.ANTHROPIC_API_KEY = "sk-ant-one"
    agent = AgentFactory(organization=cast.org_a, model="anthropic/claude-sonnet-4-5")
    assert reads(agent)[0].llm.inner.api_key == "sk-ant-one"  # type: ignore[union-attr]

    settings.ANTHROPIC_API_KEY = "sk-ant-two"

    assert reads(agent)[0].llm.inner.api_key == "sk-ant-two"  # type: ignore[union-attr]
