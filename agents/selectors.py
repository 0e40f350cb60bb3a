"""Reads on agents, messages and tools, always scoped to one organization or one agent.

Cursors are public ids (``message-…``, ``agent-…``, ``tool-…``). A cursor that names
no row the caller can see is ``NotFound`` (404), like any other id of another organization.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, Unpack

from django.db import connection
from django.db.models import BooleanField, Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import RawSQL

from accounts.pages import or_404
from accounts.scoping import Cursor, Order, page
from agents.engine import approvals as approval_rules
from agents.errors import NotFound
from agents.models import Agent, Block, Conversation, Message, MessageRole, Run
from tools.models import AgentTool, Tool

if TYPE_CHECKING:
    import uuid

    from accounts.models import Organization


# --- messages -----------------------------------------------------------------------------


def _message_cursor(agent: Agent, public_id: str) -> int:
    pk = Message.parse_public_id(public_id)
    rows = Message.objects.in_thread(agent.pk)
    seq: int | None = rows.filter(pk=pk).values_list("seq", flat=True).first() if pk else None
    if seq is None:
        raise NotFound(f"Message {public_id} not found")
    return seq


def message_list(
    *,
    agent: Agent,
    after: str | None = None,
    before: str | None = None,
    limit: int = 100,
    order: Order = "desc",
    include_system: bool = False,
) -> list[Message]:
    """A page of the agent's rows, always in chronological order (Letta's ``messages.list``).

    ``after`` / ``before`` are message ids: only rows strictly newer / older than that
    row. ``limit`` counts rows (one row may show as several LettaMessages).
    ``order="desc"`` takes the newest ``limit`` rows of that range, ``"asc"`` the oldest.
    System rows are left out unless ``include_system``.
    """
    rows = Message.objects.in_thread(agent.pk)
    if not include_system:
        rows = rows.exclude(role=MessageRole.SYSTEM)
    if after:
        rows = rows.filter(seq__gt=_message_cursor(agent, after))
    if before:
        rows = rows.filter(seq__lt=_message_cursor(agent, before))
    if order == "desc":
        return list(reversed(rows.order_by("-seq")[:limit]))
    return list(rows.order_by("seq")[:limit])


def pending_approval_rows(agents: QuerySet[Agent]) -> list[Message]:
    """The row whose tool calls wait for a person, of each of ``agents`` that awaits approval (one query).

    The one definition of ``pending_approval``, for the chat, the inbox, the API's
    ``include=agent.pending_approval`` and the approval expiry: an agent awaits approval while
    its latest in-context row (system rows aside) is an assistant row whose calls wait for a
    decision (``agents.engine.approvals``) and it is not busy (``RunQuerySet.busy_with``): a run
    an answer started is already taking care of the request. Each row comes with its agent.
    """
    latest_row = (
        Message.objects.filter(agent=OuterRef("pk"), conversation__isnull=True, seq__gte=OuterRef("context_start_seq"))
        .exclude(role=MessageRole.SYSTEM)
        .order_by("-seq")
        .values("id")[:1]
    )
    waiting = (
        agents.order_by()
        .annotate(latest_row_id=Subquery(latest_row))
        .exclude(Exists(Run.objects.busy_with(OuterRef("pk"))))
        .values("latest_row_id")
    )
    rows = Message.objects.filter(pk__in=waiting, role=MessageRole.ASSISTANT).select_related("agent__organization")
    return [row for row in rows if approval_rules.pending_approval([row.snapshot()]) is not None]


def pending_approval_row(agent: Agent) -> Message | None:
    """The row of ``agent`` whose tool calls wait for a person (``pending_approval_rows``), if any."""
    rows = pending_approval_rows(Agent.objects.filter(pk=agent.pk))
    for row in rows:
        row.agent = agent
    return rows[0] if rows else None


def in_context_message_ids(agents: Sequence[Agent]) -> dict[uuid.UUID, list[uuid.UUID]]:
    """Each agent's in-context row ids in order, in one query."""
    result: dict[uuid.UUID, list[uuid.UUID]] = {agent.pk: [] for agent in agents}
    if not agents:
        return result
    window = Q()
    for agent in agents:
        if agent.context_summary_seq is None:
            window |= Q(agent=agent, conversation__isnull=True, seq__gte=agent.context_start_seq)
        else:  # compacted: the window is not a plain suffix
            result[agent.pk] = list(Message.objects.in_context(agent).values_list("id", flat=True))
    if window:
        rows = Message.objects.filter(window).order_by("agent", "seq").values_list("agent", "id")
        for agent_id, message_id in rows:
            result[agent_id].append(message_id)
    return result


# --- agents -------------------------------------------------------------------------------


AgentRows = TypeVar("AgentRows", bound=QuerySet[Agent])


def _with_tools(agents: AgentRows) -> AgentRows:
    return agents.prefetch_related("agent_tools__tool", "agent_blocks__block")


def agent_get(*, organization: Organization | None, agent_id: str, with_tools: bool = True) -> Agent:
    """The agent ``agent_id`` of ``organization``, or ``NotFound`` (404): the one lookup of an agent
    for every transport (pages, the API, the chat's and the inbox's sockets).

    Another organization's agent, or no organization, is the same ``NotFound``. Its tools and
    blocks are prefetched unless ``with_tools`` is false (a turn reads them itself).
    """
    agents = Agent.objects.for_org(organization)
    agent: Agent = (_with_tools(agents) if with_tools else agents).get_public(agent_id, missing="Agent not found")
    if organization is not None:
        agent.organization = organization  # the caller's, already loaded: no query when the turn reads it
    return agent


DEFAULT_CONVERSATION = "default"


def thread_agent(
    *, organization: Organization | None, conversation_id: str, agent_id: str | None, with_tools: bool = True
) -> Agent:
    """The agent whose default thread a ``/v1/conversations/{conversation_id}/…`` path names.

    Letta's agent-direct mode: ``default`` with the agent's id beside it (query or body), or
    the agent's own id in the path. Any other id names a conversation this server does not
    hold: ``NotFound`` (404), as for an unknown conversation.
    """
    if conversation_id == DEFAULT_CONVERSATION and agent_id:
        return agent_get(organization=organization, agent_id=agent_id, with_tools=with_tools)
    if conversation_id.startswith(f"{Agent.id_prefix}-"):
        return agent_get(organization=organization, agent_id=conversation_id, with_tools=with_tools)
    raise NotFound(f"NOT_FOUND: Conversation not found with id '{conversation_id}'")


def agent_get_or_404(*, organization: Organization | None, agent_id: str) -> Agent:
    """``agent_get`` for a page: its ``NotFound`` is Django's ``Http404`` (the 404 page)."""
    return or_404(agent_get, organization=organization, agent_id=agent_id, with_tools=False)


def _has_tag(tag: str) -> Q | RawSQL:
    """Rows whose JSON ``tags`` list contains ``tag`` (SQLite has no JSON ``contains`` lookup)."""
    if connection.vendor == "postgresql":
        return Q(tags__contains=[tag])
    table = Agent._meta.db_table
    return RawSQL(
        f'EXISTS (SELECT 1 FROM json_each("{table}"."tags") WHERE json_each.value = %s)',
        (tag,),
        output_field=BooleanField(),
    )


@dataclass(frozen=True)
class AgentFilters:
    """Letta's filters of ``GET /v1/agents`` and ``GET /v1/agents/count``.

    ``tags`` matches agents with any of them (all of them with ``match_all_tags``).
    """

    name: str | None = None
    query_text: str | None = None
    tags: Sequence[str] = ()
    match_all_tags: bool = False


NO_FILTERS = AgentFilters()


def agent_list(
    *,
    organization: Organization | None,
    filters: AgentFilters = NO_FILTERS,
    **cursor: Unpack[Cursor],
) -> list[Agent]:
    """The organization's agents, newest first by default, with their tools prefetched."""
    agents = _filtered(organization, filters)
    return page(_with_tools(agents), Agent, **cursor)


def agent_count(*, organization: Organization | None, filters: AgentFilters = NO_FILTERS) -> int:
    """How many agents ``agent_list`` would list with these filters, over all pages."""
    return _filtered(organization, filters).count()


def _filtered(organization: Organization | None, filters: AgentFilters) -> QuerySet[Agent]:
    agents = Agent.objects.for_org(organization)
    if filters.name:
        agents = agents.filter(name=filters.name)
    if filters.query_text:
        agents = agents.filter(name__icontains=filters.query_text)
    if filters.tags:
        conditions = [_has_tag(tag) for tag in filters.tags]
        if filters.match_all_tags:
            for condition in conditions:
                agents = agents.filter(condition)
        else:
            agents = agents.filter(_any(conditions))
    return agents


def _any(conditions: list[Q | RawSQL]) -> Q:
    combined = Q()
    for condition in conditions:
        combined |= condition if isinstance(condition, Q) else Q(condition)
    return combined


def agent_tool_rows(agent: Agent) -> list[AgentTool]:
    """The agent's attachments in attachment order (from ``prefetch_related("agent_tools__tool")`` if done)."""
    prefetched = "agent_tools" in getattr(agent, "_prefetched_objects_cache", {})
    rows = list(agent.agent_tools.all() if prefetched else agent.agent_tools.select_related("tool"))
    rows.sort(key=lambda at: (at.created_at, at.tool.name))
    return rows


def agent_tool_list(*, agent: Agent, **cursor: Unpack[Cursor]) -> list[Tool]:
    """The tools attached to ``agent``, in attachment order; cursors are tool ids (all of them without
    a ``limit`` or a cursor; else 1000 at most, oldest first by default)."""
    rows = AgentTool.objects.filter(agent=agent).select_related("tool")
    if cursor.get("limit") is None and not cursor.get("after") and not cursor.get("before"):
        return [row.tool for row in rows.order_by("created_at", "tool__name")]
    attached = page(rows, Tool, cursor_field="tool__pk", **(Cursor(limit=1000, order="asc") | cursor))
    return [row.tool for row in attached]


def tag_list(
    *,
    organization: Organization | None,
    name: str | None = None,
    after: str | None = None,
    before: str | None = None,
    limit: int = 50,
    order: Order = "asc",
) -> list[str]:
    """Letta's ``GET /v1/tags/``: the organization's agent and block tags, de-duplicated and sorted;
    ``name`` keeps those containing it (any case), ``after``/``before`` compare tag strings."""
    found: set[str] = set()
    for tags in [
        *Agent.objects.for_org(organization).values_list("tags", flat=True),
        *Block.objects.for_org(organization).values_list("tags", flat=True),
    ]:
        found.update(tag for tag in tags or () if isinstance(tag, str))
    chosen = sorted(
        tag
        for tag in found
        if (not name or name.lower() in tag.lower())
        and (after is None or (tag > after if order == "asc" else tag < after))
        and (before is None or (tag < before if order == "asc" else tag > before))
    )
    return (chosen if order == "asc" else chosen[::-1])[:limit]


def organization_message_list(
    *,
    organization: Organization | None,
    conversation_id: str | None = None,
    **cursor: Unpack[Cursor],
) -> list[Message]:
    """A page of the rows of all the organization's agents (system rows aside), in chronological order.

    ``order="desc"`` takes the newest ``limit`` rows of the range, ``"asc"`` the oldest; ``conversation_id``
    keeps one conversation's rows (an unknown or another organization's conversation has none).
    """
    rows = Message.objects.for_org(organization).exclude(role=MessageRole.SYSTEM)
    if conversation_id is not None:
        conversation_pk = Conversation.parse_public_id(conversation_id)
        if conversation_pk is None:
            return []
        rows = rows.filter(conversation_id=conversation_pk)
    cursor = Cursor(limit=100, order="desc") | cursor
    found = page(rows, Message, **cursor)
    return list(reversed(found)) if cursor["order"] == "desc" else found
