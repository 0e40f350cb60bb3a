"""Reads on an organization's tools, with Letta's filters and cursors (public ``tool-…`` ids)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from accounts.scoping import Order, page
from core.errors import NotFound
from tools.models import Tool

if TYPE_CHECKING:
    from accounts.models import Organization


def tool_get(*, organization: Organization | None, tool_id: str) -> Tool:
    pk = Tool.parse_public_id(tool_id)
    tool = Tool.objects.for_org(organization).filter(pk=pk).first() if pk else None
    if tool is None:
        raise NotFound("Tool not found")
    return tool


def tool_list(
    *,
    organization: Organization | None,
    name: str | None = None,
    names: Sequence[str] = (),
    tool_ids: Sequence[str] = (),
    search: str | None = None,
    tool_types: Sequence[str] = (),
    exclude_tool_types: Sequence[str] = (),
    return_only_letta_tools: bool = False,
    after: str | None = None,
    before: str | None = None,
    limit: int = 50,
    order: Order = "desc",
) -> list[Tool]:
    """The organization's tools, newest first by default, with Letta's filters."""
    tools = Tool.objects.for_org(organization)
    if name:
        tools = tools.filter(name=name)
    if names:
        tools = tools.filter(name__in=names)
    if tool_ids:
        tools = tools.filter(pk__in=[pk for pk in map(Tool.parse_public_id, tool_ids) if pk])
    if search:
        tools = tools.filter(name__icontains=search)
    if tool_types:
        tools = tools.filter(tool_type__in=tool_types)
    if exclude_tool_types:
        tools = tools.exclude(tool_type__in=exclude_tool_types)
    if return_only_letta_tools:
        tools = tools.filter(tool_type__startswith="letta_")
    return page(tools, Tool, after=after, before=before, limit=limit, order=order)
