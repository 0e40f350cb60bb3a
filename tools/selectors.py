"""Reads on an organization's tools, with Letta's filters and cursors (public ``tool-…`` ids)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Unpack

from accounts.scoping import page
from tools.models import Tool

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from accounts.models import Organization
    from accounts.scoping import Cursor


def tool_get(*, organization: Organization | None, tool_id: str) -> Tool:
    tool: Tool = Tool.objects.for_org(organization).get_public(tool_id, missing="Tool not found")
    return tool


@dataclass(frozen=True)
class ToolFilters:
    """Letta's filters of ``GET /v1/tools`` and ``GET /v1/tools/count``."""

    name: str | None = None
    names: Sequence[str] = ()
    tool_ids: Sequence[str] = ()
    search: str | None = None
    tool_types: Sequence[str] = ()
    exclude_tool_types: Sequence[str] = ()
    return_only_letta_tools: bool = False


NO_FILTERS = ToolFilters()


def tool_list(
    *,
    organization: Organization | None,
    filters: ToolFilters = NO_FILTERS,
    **cursor: Unpack[Cursor],
) -> list[Tool]:
    """The organization's tools, newest first by default, with Letta's filters."""
    tools = _filtered(organization, filters)
    return page(tools, Tool, **cursor)


def tool_count(
    *, organization: Organization | None, filters: ToolFilters = NO_FILTERS, exclude_letta_tools: bool = False
) -> int:
    """How many tools ``tool_list`` would list with these filters (Letta's ``GET /v1/tools/count``)."""
    tools = _filtered(organization, filters)
    if exclude_letta_tools:
        tools = tools.exclude(tool_type__startswith="letta_")
    return tools.count()


# A word of a query or a tool's text: letters and digits (``web_search`` is two words).
_WORD = re.compile(r"[^\W_]+")
# Reciprocal rank fusion's constant, as Letta's hybrid search uses it.
_RRF_K = 60


@dataclass(frozen=True)
class ToolMatch:
    """One tool found by ``tool_search``: its place in the text ranking (1 is best) and its score."""

    tool: Tool
    fts_rank: int | None
    combined_score: float


def tool_search(
    *,
    organization: Organization | None,
    query: str | None = None,
    tool_types: Sequence[str] = (),
    tags: Sequence[str] = (),
    limit: int = 50,
) -> list[ToolMatch]:
    """The organization's tools that match ``query`` best first (Letta's ``POST /v1/tools/search``, text only).

    A tool matches when a word of the query is in its name, tags or description (a name
    counts three times, a tag twice); ``combined_score`` is the reciprocal rank (Letta's RRF
    with one ranking). Without a query: every tool the filters keep, newest first, unranked.
    ``tags`` keeps tools with any of them.
    """
    tools = Tool.objects.for_org(organization).order_by("-created_at", "-pk")
    if tool_types:
        tools = tools.filter(tool_type__in=tool_types)
    wanted_tags = set(tags)
    candidates = [tool for tool in tools if not wanted_tags or wanted_tags.intersection(tool.tags or ())]
    terms = list(dict.fromkeys(_WORD.findall((query or "").lower())))
    if not terms:
        return [ToolMatch(tool=tool, fts_rank=None, combined_score=0.0) for tool in candidates[:limit]]
    scored = [(score, tool) for tool in candidates if (score := _text_score(tool, terms)) > 0]
    scored.sort(key=lambda pair: (-pair[0], pair[1].name))
    return [
        ToolMatch(tool=tool, fts_rank=rank, combined_score=1 / (_RRF_K + rank))
        for rank, (_, tool) in enumerate(scored[:limit], start=1)
    ]


def _text_score(tool: Tool, terms: list[str]) -> int:
    name = set(_WORD.findall(tool.name.lower()))
    tags = {word for tag in tool.tags or () for word in _WORD.findall(str(tag).lower())}
    description = set(_WORD.findall((tool.description or "").lower()))
    return sum(3 * (term in name) + 2 * (term in tags) + (term in description) for term in terms)


def _filtered(organization: Organization | None, filters: ToolFilters) -> QuerySet[Tool]:
    tools = Tool.objects.for_org(organization)
    if filters.name:
        tools = tools.filter(name=filters.name)
    if filters.names:
        tools = tools.filter(name__in=filters.names)
    if filters.tool_ids:
        tools = tools.filter(pk__in=[pk for pk in map(Tool.parse_public_id, filters.tool_ids) if pk])
    if filters.search:
        tools = tools.filter(name__icontains=filters.search)
    if filters.tool_types:
        tools = tools.filter(tool_type__in=filters.tool_types)
    if filters.exclude_tool_types:
        tools = tools.exclude(tool_type__in=filters.exclude_tool_types)
    if filters.return_only_letta_tools:
        tools = tools.filter(tool_type__startswith="letta_")
    return tools
