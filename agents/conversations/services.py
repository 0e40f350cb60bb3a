"""Writes and reads of conversations: the one place each rule of Letta's conversation resource lives.

A new conversation starts with its own system row (seq 0 of its thread) and nothing else: no
login message, no agent history. A fork copies the source's window after its system row into a
new thread behind a fresh system row. ``for_org`` scopes every read: another organization's
conversation, like a deleted one, is a 404.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from django.db import transaction
from django.db.models import F, Max, Q, QuerySet
from django.utils import timezone

from agents import selectors
from agents.errors import InvalidArgument, NotFound, ValidationFailed
from agents.models import Agent, Block, Conversation, Message, MessageRole, Run

if TYPE_CHECKING:
    from collections.abc import Sequence

    from accounts.models import Organization, User

ConversationOrder = Literal["created_at", "last_run_completion", "last_message_at"]
ORDER_BY: tuple[ConversationOrder, ...] = ("created_at", "last_run_completion", "last_message_at")
# ``conv-<uuid4>``: version 4, variant 8/9/a/b (Letta's path validator).
CONVERSATION_ID = re.compile(r"^conv-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
MODEL_HANDLE_FORMAT = "The model handle should be in the format provider/model-name"


def not_found(conversation_id: str) -> NotFound:
    return NotFound(f"NOT_FOUND: Conversation not found with id '{conversation_id}'")


def parse_conversation_id(conversation_id: str) -> uuid.UUID:
    """The UUID of a ``conv-<uuid4>`` path id; anything else is Letta's 422."""
    if not CONVERSATION_ID.match(conversation_id):
        raise ValidationFailed(
            [
                {
                    "loc": ["path", "conversation_id"],
                    "msg": "String should match pattern '^conv-[a-fA-F0-9]{8}'",
                    "type": "string_pattern_mismatch",
                }
            ]
        )
    return uuid.UUID(conversation_id.removeprefix("conv-"))


def conversation_get(*, organization: Organization | None, conversation_id: str) -> Conversation:
    """A live conversation of the caller's organization, by its ``conv-…`` id (``NotFound`` otherwise)."""
    pk = Conversation.parse_public_id(conversation_id) if conversation_id.startswith("conv-") else None
    found: Conversation | None = (
        Conversation.objects.for_org(organization).live().select_related("agent").filter(pk=pk).first() if pk else None
    )
    if found is None:
        raise not_found(conversation_id)
    return found


def _check_model(model: str | None) -> None:
    if model is None:
        return
    provider, _, name = model.partition("/")
    if not provider or not name:
        raise InvalidArgument(MODEL_HANDLE_FORMAT)


def system_row(conversation: Conversation, seq: int = 0) -> Message:
    """The thread's system row, from the agent's system prompt now (compiled with memory at each step)."""
    agent = conversation.agent
    return Message(
        organization_id=agent.organization_id,
        agent_id=agent.pk,
        conversation=conversation,
        seq=seq,
        role=MessageRole.SYSTEM,
        content=[{"type": "text", "text": agent.system}],
    )


def _isolated_copies(agent: Agent, labels: Sequence[str]) -> list[Block]:
    blocks = {block.label: block for block in Block.objects.filter(agent_blocks__agent=agent, label__in=labels)}
    copies = []
    for label in labels:
        block = blocks.get(label)
        if block is None:
            raise InvalidArgument(f"Block with label '{label}' not found on agent '{agent.public_id}'")
        copies.append(
            Block(
                organization_id=agent.organization_id,
                label=block.label,
                value=block.value,
                limit=block.limit,
                description=block.description,
                read_only=block.read_only,
                metadata=block.metadata,
            )
        )
    return copies


@transaction.atomic
def conversation_create(
    *,
    agent: Agent,
    user: User | None,
    summary: str | None = None,
    description: str | None = None,
    isolated_block_labels: Sequence[str] = (),
    model: str | None = None,
    model_settings: dict[str, Any] | None = None,
) -> Conversation:
    """A new thread of ``agent``: its system row only, and copies of the blocks named ``isolated``."""
    _check_model(model)
    copies = _isolated_copies(agent, isolated_block_labels)
    conversation = Conversation.objects.create(
        organization_id=agent.organization_id,
        agent=agent,
        summary=summary or "",
        description=description or "",
        model=model or "",
        model_settings=model_settings,
        created_by=user,
        last_updated_by=user,
    )
    system_row(conversation).save()
    if copies:
        Block.objects.bulk_create(copies)
        conversation.isolated_blocks.set(copies)
    return conversation


def conversation_update(conversation: Conversation, *, user: User | None, changes: dict[str, Any]) -> Conversation:
    """Letta's PATCH: each field given and not ``null`` is set; a field cannot be cleared."""
    given = {name: value for name, value in changes.items() if value is not None}
    _check_model(given.get("model"))
    for name, value in given.items():
        setattr(conversation, name, value)
    conversation.last_updated_by = user
    conversation.save()
    return conversation


@transaction.atomic
def conversation_delete(conversation: Conversation) -> None:
    """Hide the conversation everywhere (Letta's soft delete); its isolated block copies are deleted."""
    Block.objects.filter(pk__in=conversation.isolated_blocks.values("pk")).delete()
    Conversation.objects.filter(pk=conversation.pk).update(deleted_at=timezone.now())


@transaction.atomic
def conversation_fork(
    *, agent: Agent, source: Conversation | None, user: User | None, rows: Sequence[Message]
) -> Conversation:
    """A new thread of ``agent`` holding copies of ``rows`` (the source's window after its system row)
    behind a fresh system row; the source's model override comes along, its summary does not."""
    fork = Conversation.objects.create(
        organization_id=agent.organization_id,
        agent=agent,
        model=source.model if source else "",
        model_settings=source.model_settings if source else None,
        created_by=user,
        last_updated_by=user,
    )
    fork.agent = agent
    copies = [system_row(fork)]
    for offset, row in enumerate(row for row in rows if row.role != MessageRole.SYSTEM):
        copies.append(
            Message(
                organization_id=agent.organization_id,
                agent_id=agent.pk,
                conversation=fork,
                seq=offset + 1,
                role=row.role,
                content=row.content,
                tool_calls=row.tool_calls,
                tool_returns=row.tool_returns,
                images=row.images,
                approvals=row.approvals,
                metadata=row.metadata,
                otid=row.otid,
                name=row.name,
                is_err=row.is_err,
                sender_user_id=row.sender_user_id,
                sender_api_key_id=row.sender_api_key_id,
            )
        )
    Message.objects.bulk_create(copies)
    return fork


def conversation_list(
    *,
    organization: Organization | None,
    agent: Agent | None,
    limit: int,
    after: str | None,
    summary_search: str | None,
    order: Literal["asc", "desc"],
    order_by: ConversationOrder,
) -> list[Conversation]:
    """A page of live conversations (of ``agent``, else of the organization), Letta's ``after`` cursor only.

    ``created_at`` pages strictly older (desc) or newer (asc) than the cursor; the other two
    orders put nulls last, the id breaking ties.
    """
    rows: QuerySet[Conversation] = Conversation.objects.for_org(organization).live()
    if agent is not None:
        rows = rows.filter(agent=agent)
    if summary_search:
        rows = rows.filter(summary__contains=summary_search)
    if order_by == "last_run_completion":
        rows = rows.annotate(sort_key=Max("runs__completed_at"))
    else:
        rows = rows.annotate(sort_key=F(order_by))
    descending = order == "desc"
    if after:
        rows = _after(rows, after, descending=descending)
    key = F("sort_key").desc(nulls_last=True) if descending else F("sort_key").asc(nulls_last=True)
    tiebreak = "-id" if descending else "id"
    return list(rows.order_by(key, tiebreak)[:limit])


def _after(rows: QuerySet[Conversation], cursor: str, *, descending: bool) -> QuerySet[Conversation]:
    pk = Conversation.parse_public_id(cursor)
    anchor = rows.filter(pk=pk).values_list(F("sort_key"), "id").first() if pk else None
    if anchor is None:
        raise not_found(cursor)
    value, tiebreak = anchor
    if value is None:  # among the nulls, which come last whatever the order
        return rows.filter(Q(sort_key__isnull=True), Q(id__lt=tiebreak) if descending else Q(id__gt=tiebreak))
    beyond = Q(sort_key__lt=value) if descending else Q(sort_key__gt=value)
    tie = Q(sort_key=value) & (Q(id__lt=tiebreak) if descending else Q(id__gt=tiebreak))
    return rows.filter(beyond | tie | Q(sort_key__isnull=True))


def isolated_block_ids(conversation: Conversation) -> list[Any]:
    return list(conversation.isolated_blocks.values_list("pk", flat=True))


def has_runs(conversation: Conversation) -> bool:
    return Run.objects.filter(conversation=conversation).exists()


@dataclass(frozen=True)
class Thread:
    """What a ``/v1/conversations/{id}/…`` path names: an agent's default thread, or one of its conversations."""

    agent: Agent
    conversation: Conversation | None = None

    @property
    def conversation_id(self) -> Any:
        return self.conversation.pk if self.conversation is not None else None


def thread_get(
    *, organization: Organization | None, conversation_id: str, agent_id: str | None, with_tools: bool = True
) -> Thread:
    """The thread a path id names: ``conv-…`` (a live conversation of the organization), or Letta's
    agent-direct mode (``default`` with ``agent_id``, or the agent's own id: ``selectors.thread_agent``)."""
    if conversation_id.startswith(f"{Conversation.id_prefix}-"):
        conversation = conversation_get(organization=organization, conversation_id=conversation_id)
        agent = selectors.agent_get(
            organization=organization, agent_id=conversation.agent.public_id, with_tools=with_tools
        )
        conversation.agent = agent
        return Thread(agent=agent, conversation=conversation)
    agent = selectors.thread_agent(
        organization=organization, conversation_id=conversation_id, agent_id=agent_id, with_tools=with_tools
    )
    return Thread(agent=agent)


def conversation_messages(
    conversation: Conversation, *, before: str | None, after: str | None, limit: int, order: Literal["asc", "desc"]
) -> list[Message]:
    """Every row of the conversation, evicted ones and its system row included, by position (``seq``):
    ``desc`` is newest first. ``before``/``after`` are positional whatever the order; an unknown
    cursor is ignored (Letta's ``list_conversation_messages``)."""
    rows = Message.objects.in_thread(conversation.agent_id, conversation.pk)
    for cursor, lookup in ((before, "seq__lt"), (after, "seq__gt")):
        pk = Message.parse_public_id(cursor) if cursor else None
        seq = rows.filter(pk=pk).values_list("seq", flat=True).first() if pk else None
        if seq is not None:
            rows = rows.filter(**{lookup: seq})
    return list(rows.order_by("-seq" if order == "desc" else "seq")[:limit])
