"""Reads on blocks and passages, scoped to one organization or one agent.

Another organization's id, an unknown label, or a malformed id is ``NotFound`` (404).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack

from django.db import connection
from django.db.models import BooleanField, Count, Q
from django.db.models.expressions import RawSQL

from accounts.scoping import Cursor, page
from agents.errors import NotFound
from agents.memory.archives import agent_passages
from agents.models import Agent, AgentBlock, Block, Passage

if TYPE_CHECKING:
    from accounts.models import Organization


def has_tag(model: type[Block] | type[Passage], tag: str) -> Q:
    """Rows whose JSON ``tags`` list contains ``tag`` (SQLite has no JSON ``contains`` lookup)."""
    if connection.vendor == "postgresql":
        return Q(tags__contains=[tag])
    table = model._meta.db_table
    return Q(
        RawSQL(
            f'EXISTS (SELECT 1 FROM json_each("{table}"."tags") WHERE json_each.value = %s)',
            (tag,),
            output_field=BooleanField(),
        )
    )


def any_of(conditions: Sequence[Q]) -> Q:
    combined = Q()
    for condition in conditions:
        combined |= condition
    return combined


def block_get(*, organization: Organization | None, block_id: str) -> Block:
    block: Block = Block.objects.for_org(organization).get_public(block_id, missing=f"Block not found: {block_id}")
    return block


def agent_blocks(agent: Agent | Any) -> list[Block]:
    """The agent's blocks in prompt order (from ``prefetch_related("agent_blocks__block")`` if done)."""
    prefetched = "agent_blocks" in getattr(agent, "_prefetched_objects_cache", {})
    links = list(agent.agent_blocks.all()) if prefetched else list(agent.agent_blocks.select_related("block"))
    links.sort(key=lambda link: (link.position, link.id))
    return [link.block for link in links]


def agent_block_get(*, agent: Agent, label: str) -> Block:
    link = AgentBlock.objects.filter(agent=agent, block__label=label).select_related("block").first()
    if link is None:
        raise NotFound(f"No block with label '{label}' found for agent '{agent.public_id}'")
    return link.block


def agent_block_list(*, agent: Agent, **cursor: Unpack[Cursor]) -> list[Block]:
    """The agent's blocks: in prompt order, or paged by creation time when the caller pages or orders (1.x)."""
    if all(value is None for value in cursor.values()):
        return agent_blocks(agent)
    rows = Block.objects.filter(agent_blocks__agent=agent)
    return page(rows, Block, **(Cursor(limit=100, order="asc") | cursor))


def block_list(
    *,
    organization: Organization | None,
    label: str | None = None,
    label_search: str | None = None,
    value_search: str | None = None,
    description_search: str | None = None,
    tags: Sequence[str] = (),
    match_all_tags: bool = False,
    connected_to_agents_count_gt: int | None = None,
    connected_to_agents_count_lt: int | None = None,
    connected_to_agents_count_eq: Sequence[int] = (),
    **cursor: Unpack[Cursor],
) -> list[Block]:
    """The organization's blocks, filtered as Letta's ``GET /v1/blocks/`` does."""
    rows = Block.objects.for_org(organization)
    if label:
        rows = rows.filter(label=label)
    if label_search:
        rows = rows.filter(label__icontains=label_search)
    if value_search:
        rows = rows.filter(value__icontains=value_search)
    if description_search:
        rows = rows.filter(description__icontains=description_search)
    if tags:
        conditions = [has_tag(Block, tag) for tag in tags]
        if match_all_tags:
            for condition in conditions:
                rows = rows.filter(condition)
        else:
            rows = rows.filter(any_of(conditions))
    if (
        connected_to_agents_count_gt is not None
        or connected_to_agents_count_lt is not None
        or connected_to_agents_count_eq
    ):
        rows = rows.annotate(agent_count=Count("agent_blocks"))
        if connected_to_agents_count_gt is not None:
            rows = rows.filter(agent_count__gt=connected_to_agents_count_gt)
        if connected_to_agents_count_lt is not None:
            rows = rows.filter(agent_count__lt=connected_to_agents_count_lt)
        if connected_to_agents_count_eq:
            rows = rows.filter(agent_count__in=list(connected_to_agents_count_eq))
    return page(rows, Block, **(Cursor(limit=100, order="asc") | cursor))


def block_agent_list(*, block: Block) -> list[Agent]:
    """The agents ``block`` is attached to (always of the block's organization), oldest first."""
    return list(
        Agent.objects.for_org(block.organization_id)
        .filter(agent_blocks__block=block)
        .prefetch_related("agent_tools__tool", "agent_blocks__block")
        .order_by("created_at", "pk")
    )


def passage_list(
    *,
    agent: Agent,
    after: str | None = None,
    before: str | None = None,
    limit: int = 100,
    ascending: bool = True,
    search: str | None = None,
) -> list[Passage]:
    rows = agent_passages(agent)
    if search:
        rows = rows.filter(text__icontains=search)
    return page(rows, Passage, after=after, before=before, limit=limit, order="asc" if ascending else "desc")


def passage_get(*, agent: Agent, passage_id: str) -> Passage:
    passage: Passage = agent_passages(agent).get_public(passage_id, missing=f"Passage not found: {passage_id}")
    return passage


def block_count(*, organization: Organization | None) -> int:
    return Block.objects.for_org(organization).count()
