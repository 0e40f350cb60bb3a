"""``accounts.scoping.page`` and its ``Cursor``: what a list answers when the caller leaves a key out."""

from __future__ import annotations

import pytest

from accounts.scoping import Cursor, page
from agents import selectors
from agents.memory import selectors as memory_selectors
from agents.memory.services import block_create
from agents.models import Agent, Block
from tests.factories import AgentFactory, AgentToolFactory, ToolFactory

pytestmark = pytest.mark.django_db


def test_without_a_cursor_a_page_is_the_50_newest_rows(cast):
    for index in range(52):
        block_create(organization=cast.org_a, label=f"block-{index}", value="v")
    rows = Block.objects.for_org(cast.org_a)

    newest = page(rows, Block)

    assert [block.label for block in newest] == [f"block-{index}" for index in range(51, 1, -1)]


def test_a_selectors_own_defaults_give_way_to_the_callers_keys(cast):
    for index in range(3):
        block_create(organization=cast.org_a, label=f"block-{index}", value="v")

    oldest_first = memory_selectors.block_list(organization=cast.org_a)
    newest_two = memory_selectors.block_list(organization=cast.org_a, **Cursor(limit=2, order="desc"))

    assert [block.label for block in oldest_first] == ["block-0", "block-1", "block-2"]
    assert [block.label for block in newest_two] == ["block-2", "block-1"]


def test_an_agents_tools_are_all_listed_unless_the_caller_pages(cast):
    agent: Agent = AgentFactory(organization=cast.org_a, name="pager")
    for name in ("alpha", "beta", "gamma"):
        AgentToolFactory(agent=agent, tool=ToolFactory(organization=cast.org_a, name=name))
    attached = [tool.name for tool in selectors.agent_tool_list(agent=agent)]

    first = selectors.agent_tool_list(agent=agent, limit=1)

    assert attached[-3:] == ["alpha", "beta", "gamma"]
    assert [tool.name for tool in first] == attached[:1]
