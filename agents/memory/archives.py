"""Archives: collections of passages that agents attach and search (Letta's ``/v1/archives``).

Each agent's own archival memory is an archive it owns (``AgentArchive.is_owner``), made on its
first insert as Letta does (``"<agent name>'s Archive"``, the agent's embedding handle). Shared
archives are made through the API and attached to any number of the organization's agents; an
agent searches its own archive and every attached one. Another organization's archive, or a
malformed id, is ``NotFound`` (404), for reads, writes and attachments alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack

from django.db import IntegrityError, transaction

from accounts.scoping import Cursor, Order, page
from agents.errors import NotFound
from agents.llm.agent_settings import validate_embedding_handle
from agents.llm.handles import DEFAULT_EMBEDDING_HANDLE
from agents.models import Agent, AgentArchive, Archive, Passage

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from accounts.models import Organization, User
    from accounts.scoping import OrgScopedQuerySet

OWN_ARCHIVE_DESCRIPTION = "Default archive created automatically"


# --- reads ---------------------------------------------------------------------------------


def archive_get(*, organization: Organization | Any | None, archive_id: str) -> Archive:
    archive: Archive = Archive.objects.for_org(organization).get_public(
        archive_id, missing=f"Archive with id {archive_id} not found"
    )
    return archive


def archive_list(
    *,
    organization: Organization | None,
    name: str | None = None,
    agent: Agent | None = None,
    **cursor: Unpack[Cursor],
) -> list[Archive]:
    """The organization's archives (by exact ``name``, or attached to ``agent``), newest first by default."""
    rows = Archive.objects.for_org(organization)
    if name is not None:
        rows = rows.filter(name=name)
    if agent is not None:
        rows = rows.filter(agent_archives__agent=agent)
    return page(rows, Archive, **cursor)


def archive_agent_list(*, archive: Archive, limit: int = 50, order: Order = "desc") -> list[Agent]:
    """The agents ``archive`` is attached to (always of the archive's organization)."""
    rows = (
        Agent.objects.for_org(archive.organization_id)
        .filter(agent_archives__archive=archive)
        .prefetch_related("agent_tools__tool", "agent_blocks__block")
    )
    return page(rows, Agent, limit=limit, order=order)


def agent_passages(agent: Agent | Any) -> OrgScopedQuerySet:
    """The passages of the archives the agent searches: its own and the attached ones."""
    archives = AgentArchive.objects.filter(agent_id=agent.pk).values("archive_id")
    return Passage.objects.for_org(agent.organization_id).filter(archive_id__in=archives)


def archive_passage_get(*, archive: Archive, passage_id: str) -> Passage:
    rows = Passage.objects.for_org(archive.organization_id).filter(archive=archive)
    passage: Passage = rows.get_public(passage_id, missing=f"Passage with id {passage_id} not found")
    return passage


def search_scope(
    *, organization: Organization | None, agent: Agent | None = None, archive: Archive | None = None
) -> QuerySet[Passage]:
    """The passages ``POST /v1/passages/search`` looks in: the agent's archives, else the archive, else all."""
    if agent is not None:
        return agent_passages(agent)
    rows = Passage.objects.for_org(organization)
    return rows.filter(archive=archive) if archive is not None else rows


# --- writes --------------------------------------------------------------------------------


def embedding_handle(
    organization: Organization | None, embedding: str | None, embedding_config: dict[str, Any] | None
) -> str:
    """The archive's embedding handle: ``embedding``, else the (deprecated) config's handle, else the default."""
    handle = embedding or (embedding_config or {}).get("handle") or DEFAULT_EMBEDDING_HANDLE
    return validate_embedding_handle(str(handle), organization=organization)


@transaction.atomic
def archive_create(
    *,
    organization: Organization,
    name: str,
    description: str | None = None,
    embedding: str | None = None,
    embedding_config: dict[str, Any] | None = None,
    user: User | None = None,
) -> Archive:
    return Archive.objects.create(
        organization=organization,
        name=name,
        description=description or "",
        embedding=embedding_handle(organization, embedding, embedding_config),
        created_by=user,
    )


@transaction.atomic
def archive_update(*, archive: Archive, name: str | None = None, description: str | None = None) -> Archive:
    if name is not None:
        archive.name = name
    if description is not None:
        archive.description = description
    archive.save(update_fields=["name", "description", "updated_at"])
    return archive


@transaction.atomic
def archive_delete(*, archive: Archive) -> None:
    """Delete the archive with its passages; the agents it was attached to keep their own archives."""
    archive.delete()


def _same_org(agent: Agent, archive: Archive) -> None:
    if archive.organization_id != agent.organization_id:
        raise NotFound(f"Archive with id {archive.public_id} not found")


@transaction.atomic
def archive_attach(*, agent: Agent, archive: Archive) -> None:
    """Attach ``archive`` to ``agent`` (again is a no-op)."""
    _same_org(agent, archive)
    AgentArchive.objects.get_or_create(agent=agent, archive=archive)


@transaction.atomic
def archive_detach(*, agent: Agent, archive: Archive) -> None:
    """Detach ``archive`` from ``agent`` (not attached is a no-op); the archive and its passages stay."""
    _same_org(agent, archive)
    AgentArchive.objects.filter(agent=agent, archive=archive).delete()


def own_archive_ids(agent: Agent) -> list[Any]:
    """The ids of the archives ``agent`` owns (its archival memory), for ``drop_unused_archives`` after it goes."""
    return list(AgentArchive.objects.filter(agent=agent, is_owner=True).values_list("archive_id", flat=True))


def drop_unused_archives(archive_ids: list[Any]) -> None:
    """Delete those of the archives that hold no passage and are attached to no agent.

    An agent's passages go with the agent, so its own archive is empty then unless passages were
    added to it through ``/v1/archives`` (kept: they are memories nobody asked to delete), and
    another agent may have it attached (kept: that agent searches it).
    """
    if archive_ids:
        unused = Archive.objects.filter(pk__in=archive_ids, passages__isnull=True, agent_archives__isnull=True)
        Archive.objects.filter(pk__in=list(unused.values_list("pk", flat=True))).delete()


def own_archive(agent: Agent) -> Archive:
    """The agent's own archive, made (and attached as its owner's) on first use.

    It embeds with the agent's embedding handle, also after the agent's handle changes.
    """
    link = AgentArchive.objects.filter(agent=agent, is_owner=True).select_related("archive").first()
    if link is not None:
        if link.archive.embedding != agent.embedding:
            link.archive.embedding = agent.embedding
            link.archive.save(update_fields=["embedding", "updated_at"])
        return link.archive
    try:
        with transaction.atomic():
            archive = Archive.objects.create(
                organization_id=agent.organization_id,
                name=f"{agent.name}'s Archive",
                description=OWN_ARCHIVE_DESCRIPTION,
                embedding=agent.embedding,
            )
            AgentArchive.objects.create(agent=agent, archive=archive, is_owner=True)
    except IntegrityError:  # a concurrent first insert made it
        return AgentArchive.objects.select_related("archive").get(agent=agent, is_owner=True).archive
    return archive
