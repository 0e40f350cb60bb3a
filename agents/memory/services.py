"""Writes on core memory: blocks, their attachment to agents, and the edits the memory tools make.

Keyword-only and transactional. A block's value never exceeds its ``limit``; a label is
unique among one agent's blocks. ``read_only`` restricts the agent's tools only: the
API may still edit a read-only block, as on Letta.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from django.db import transaction
from django.db.models import Max

from agents.broadcast import announce_memory_edit
from agents.errors import ApplicationError, Conflict, NotFound, ValidationFailed
from agents.memory.models import DEFAULT_BLOCK_CHAR_LIMIT
from agents.models import Agent, AgentBlock, Block, Conversation
from agents.wire.messages import public_id

if TYPE_CHECKING:
    from accounts.models import Organization

EditedBy = Literal["tool", "api", "user"]

PERSONA_DESCRIPTION = (
    "The persona block: Stores details about your current persona, guiding how you behave and respond. "
    "This helps you to maintain consistency and personality in your interactions."
)
HUMAN_DESCRIPTION = (
    "The human block: Stores key details about the person you are conversing with, "
    "allowing for more personalized and friend-like conversation."
)
DEFAULT_DESCRIPTIONS = {"persona": PERSONA_DESCRIPTION, "human": HUMAN_DESCRIPTION}
DEFAULT_BLOCKS: tuple[dict[str, str], ...] = (
    {"label": "human", "value": "Nothing is known about the user yet."},
    {"label": "persona", "value": "I am a helpful assistant with a memory: I remember what matters to the user."},
)
BLOCK_FIELDS = frozenset({"label", "value", "limit", "description", "read_only", "metadata", "tags"})
READ_ONLY_ERROR = "Error This block is read-only and cannot be edited."
MAX_LABEL_CHARS = 200


class BlockLimitExceeded(ApplicationError):
    """A value longer than its block's limit (400 on a modify, as on Letta)."""

    status_code = 400

    def __init__(self, limit: int, length: int) -> None:
        self.limit = limit
        self.length = length
        super().__init__(f"Edit failed: Exceeds {limit} character limit (requested {length})")


class BlockEditError(Exception):
    """A memory tool's edit was refused; the message is what the model reads."""


def limit_error(limit: int, length: int) -> str:
    return f"Edit failed: Exceeds {limit} character limit (requested {length})"


def _checked(fields: Mapping[str, Any], *, loc: list[str | int]) -> dict[str, Any]:
    """The block fields, with Letta's defaults and a 422 for a value past its limit or a blank label."""
    data = {key: value for key, value in fields.items() if key in BLOCK_FIELDS and value is not None}
    label = str(data.get("label") or "").strip()
    if not label:
        raise ValidationFailed([{"loc": [*loc, "label"], "msg": "Field required", "type": "missing"}])
    if len(label) > MAX_LABEL_CHARS:
        raise ValidationFailed(
            [
                {
                    "loc": [*loc, "label"],
                    "msg": f"A label has at most {MAX_LABEL_CHARS} characters",
                    "type": "value_error",
                }
            ]
        )
    data["label"] = label
    data["value"] = str(data.get("value") or "")
    data["limit"] = int(data.get("limit") or DEFAULT_BLOCK_CHAR_LIMIT)
    if data["limit"] < 1:
        raise ValidationFailed(
            [{"loc": [*loc, "limit"], "msg": "Input should be greater than 0", "type": "greater_than"}]
        )
    if len(data["value"]) > data["limit"]:
        raise ValidationFailed(
            [{"loc": [*loc, "value"], "msg": limit_error(data["limit"], len(data["value"])), "type": "value_error"}]
        )
    if not data.get("description"):
        data["description"] = DEFAULT_DESCRIPTIONS.get(label, "")
    data["metadata"] = dict(data.get("metadata") or {})
    data["tags"] = list(data.get("tags") or [])
    return data


@transaction.atomic
def block_create(*, organization: Organization, **fields: Any) -> Block:
    """A new block of ``organization`` (``label`` required; ``value``, ``limit``, ``description``,
    ``read_only``, ``metadata``, ``tags`` optional)."""
    return Block.objects.create(organization=organization, **_checked(fields, loc=["body"]))


@transaction.atomic
def block_update(*, block: Block, by: EditedBy = "api", **fields: Any) -> Block:
    """Change the given fields (``None`` leaves one as it is); a value past the limit is a ``BlockLimitExceeded``.

    ``by`` says who edits, for the ``memory_updated`` announcement (``block_save``).
    """
    block = Block.objects.select_for_update().get(pk=block.pk)
    changes = {key: value for key, value in fields.items() if key in BLOCK_FIELDS and value is not None}
    if "label" in changes and changes["label"] != block.label:
        label = str(changes["label"]).strip()
        if not label:
            raise ValidationFailed([{"loc": ["body", "label"], "msg": "Label may not be blank", "type": "value_error"}])
        clash = AgentBlock.objects.filter(
            agent__in=AgentBlock.objects.filter(block=block).values("agent"), block__label=label
        ).exclude(block=block)
        if clash.exists():
            raise Conflict(f"An agent using this block already has a block labelled '{label}'")
        changes["label"] = label
    for key, value in changes.items():
        setattr(block, key, value)
    if len(block.value) > block.limit:
        raise BlockLimitExceeded(block.limit, len(block.value))
    return block_save(block=block, by=by)


@transaction.atomic
def block_save(*, block: Block, by: EditedBy, run_id: Any = None, message_id: Any = None) -> Block:
    """The one writer of a block's value (and fields): save it, and once committed announce it.

    Every agent the block is attached to hears ``memory_updated`` on its group
    (``memory_updated_payload``), so a shared block updates every open chat.
    ``run_id`` and ``message_id`` (row pks) say which run and tool row made a tool's edit.
    """
    block.save()
    _announce(block=block, by=by, run_id=run_id, message_id=message_id)
    return block


def _announce(*, block: Block, by: EditedBy, run_id: Any = None, message_id: Any = None) -> None:
    """Have ``agents.broadcast`` announce the edit once it commits (in its run's order, for a tool's)."""
    agent_ids = list(AgentBlock.objects.filter(block=block).order_by("agent_id").values_list("agent_id", flat=True))
    payload = memory_updated_payload(block=block, agent_ids=agent_ids, by=by, run_id=run_id, message_id=message_id)
    announce_memory_edit(agent_ids=agent_ids, payload=payload)


def panel_block(block: Block) -> dict[str, Any]:
    """A block as the chat's memory panel shows it."""
    return {
        "id": block.public_id,
        "label": block.label,
        "value": block.value,
        "limit": block.limit,
        "chars": len(block.value),
        "read_only": block.read_only,
        "description": block.description,
    }


def memory_updated_payload(
    *, block: Block, agent_ids: Sequence[Any], by: EditedBy, run_id: Any = None, message_id: Any = None
) -> dict[str, Any]:
    """The ``memory_updated`` payload: state, not a run event, so it has no ``seq``."""
    return {
        "type": "memory_updated",
        "block": panel_block(block),
        "agent_ids": [public_id("agent", agent_id) for agent_id in agent_ids],
        "by": by,
        "run_id": public_id("run", run_id),
        "message_id": public_id("message", message_id),
    }


class BlockReadOnly(ApplicationError):
    status_code = 400
    default_detail = "This block is read-only."


@transaction.atomic
def agent_block_set_value(*, agent: Agent, block_id: str, value: str) -> Block:
    """A person's edit of one of the agent's blocks in the chat (a read-only block is refused there)."""
    pk = Block.parse_public_id(block_id)
    link = AgentBlock.objects.filter(agent=agent, block_id=pk).select_related("block").first() if pk else None
    if link is None:
        raise NotFound(f"Block not found: {block_id}")
    if link.block.read_only:
        raise BlockReadOnly()
    return block_update(block=link.block, by="user", value=value)


@transaction.atomic
def block_delete(*, block: Block) -> None:
    """Delete the block; it leaves every agent it was attached to."""
    block.delete()


def _next_position(agent: Agent) -> int:
    top = AgentBlock.objects.filter(agent=agent).aggregate(top=Max("position"))["top"]
    return 0 if top is None else top + 1


def _check_label_free(agent: Agent, block: Block) -> None:
    if AgentBlock.objects.filter(agent=agent, block__label=block.label).exclude(block=block).exists():
        raise Conflict(f"Agent {agent.public_id} already has a block labelled '{block.label}'")


@transaction.atomic
def agent_blocks_init(
    *,
    agent: Agent,
    memory_blocks: Sequence[Mapping[str, Any]] | None = None,
    block_ids: Sequence[str] | None = None,
) -> list[Block]:
    """Give a new agent its blocks: ``memory_blocks`` created inline, then existing ``block_ids``
    of its organization (another organization's id is a ``NotFound``). With neither, Letta's
    default ``human`` and ``persona`` blocks."""
    organization = agent.organization
    if memory_blocks is None and block_ids is None:
        memory_blocks = DEFAULT_BLOCKS
    blocks: list[Block] = [
        Block(organization=organization, **_checked(fields, loc=["body", "memory_blocks", index]))
        for index, fields in enumerate(memory_blocks or ())
    ]
    Block.objects.bulk_create(blocks)
    for raw in block_ids or ():
        found = Block.objects.for_org(organization).get_public(raw, missing=f"Block not found: {raw}")
        if found not in blocks:
            blocks.append(found)
    labels = [block.label for block in blocks]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise ValidationFailed(
            [
                {
                    "loc": ["body", "memory_blocks"],
                    "msg": f"Duplicate block labels: {', '.join(duplicates)}",
                    "type": "value_error",
                }
            ]
        )
    AgentBlock.objects.bulk_create(
        [AgentBlock(agent=agent, block=block, position=index) for index, block in enumerate(blocks)]
    )
    return blocks


@transaction.atomic
def agent_attach_block(*, agent: Agent, block: Block) -> Agent:
    """Attach ``block`` at the end of the agent's blocks (idempotent); its label must be free on the agent."""
    if block.organization_id != agent.organization_id:
        raise NotFound(f"Block not found: {block.public_id}")
    Agent.objects.select_for_update().filter(pk=agent.pk).first()  # serializes attaches: positions stay unique
    if not AgentBlock.objects.filter(agent=agent, block=block).exists():
        _check_label_free(agent, block)
        AgentBlock.objects.create(agent=agent, block=block, position=_next_position(agent))
    return agent


@transaction.atomic
def agent_detach_block(*, agent: Agent, block: Block) -> Agent:
    """Detach ``block`` from the agent (idempotent); the block itself stays."""
    if block.organization_id != agent.organization_id:
        raise NotFound(f"Block not found: {block.public_id}")
    AgentBlock.objects.filter(agent=agent, block=block).delete()
    return agent


# --- edits by the agent's own memory tools ----------------------------------------------


def available_labels(*, organization_id: Any, agent_id: Any) -> list[str]:
    return list(
        AgentBlock.objects.filter(agent_id=agent_id, agent__organization_id=organization_id)
        .order_by("position", "id")
        .values_list("block__label", flat=True)
    )


def _missing_label(organization_id: Any, agent_id: Any, label: str) -> BlockEditError:
    labels = available_labels(organization_id=organization_id, agent_id=agent_id)
    return BlockEditError(f"Block field {label} does not exist (available sections = {', '.join(labels)})")


@transaction.atomic
def memory_edit(
    *,
    organization_id: Any,
    agent_id: Any,
    label: str,
    edit: Callable[[str], str],
    create_missing: bool = False,
    run_id: Any = None,
    message_id: Any = None,
    conversation_id: Any = None,
) -> Block:
    """Apply ``edit`` (old value → new value) to the agent's block ``label``, under a row lock; on a
    conversation's thread (``conversation_id``), to its isolated copy of that block if it has one.

    Refused with a ``BlockEditError`` (the block unchanged) when the block is read-only, when
    the new value is past the limit, or when ``edit`` raises one. ``create_missing`` creates and
    attaches an empty block first (``memory_rethink``). ``message_id`` is the tool row storing the
    call's result, named by the ``memory_updated`` announcement.
    """
    isolated = _isolated_block_id(organization_id, conversation_id, label) if conversation_id is not None else None
    link = (
        AgentBlock.objects.filter(agent_id=agent_id, agent__organization_id=organization_id, block__label=label)
        .select_related("block")
        .first()
        if isolated is None
        else None
    )
    if isolated is not None:
        block = Block.objects.select_for_update().get(pk=isolated)
    elif link is None:
        if not create_missing:
            raise _missing_label(organization_id, agent_id, label)
        block = memory_create_block(
            organization_id=organization_id, agent_id=agent_id, label=label, run_id=run_id, message_id=message_id
        )
    else:
        block = Block.objects.select_for_update().get(pk=link.block_id)
    if block.read_only:
        raise BlockEditError(READ_ONLY_ERROR)
    value = edit(block.value)
    if len(value) > block.limit:
        raise BlockEditError(limit_error(block.limit, len(value)))
    if value != block.value:
        block.value = value
        block_save(block=block, by="tool", run_id=run_id, message_id=message_id)
    return block


def _isolated_block_id(organization_id: Any, conversation_id: Any, label: str) -> Any:
    """The id of a conversation's isolated copy of the block ``label``, or ``None``."""
    links = Conversation.isolated_blocks.through.objects.filter(
        conversation_id=conversation_id,
        conversation__organization_id=organization_id,
        block__label=label,
    )
    return links.values_list("block_id", flat=True).first()


def _agent_for_edit(organization_id: Any, agent_id: Any) -> Agent:
    agent = Agent.objects.for_org(organization_id).filter(pk=agent_id).first()
    if agent is None:
        raise BlockEditError("The calling agent was not found.")
    return agent


def _link_for_edit(organization_id: Any, agent_id: Any, label: str) -> AgentBlock:
    link = (
        AgentBlock.objects.filter(agent_id=agent_id, agent__organization_id=organization_id, block__label=label)
        .select_related("block")
        .first()
    )
    if link is None:
        raise _missing_label(organization_id, agent_id, label)
    return link


@transaction.atomic
def memory_create_block(
    *,
    organization_id: Any,
    agent_id: Any,
    label: str,
    value: str = "",
    description: str = "",
    run_id: Any = None,
    message_id: Any = None,
) -> Block:
    """Create a block and attach it to the calling agent (the ``memory`` tool's ``create``)."""
    agent = _agent_for_edit(organization_id, agent_id)
    if AgentBlock.objects.filter(agent=agent, block__label=label).exists():
        raise BlockEditError(f"A memory block with label '{label}' already exists.")
    try:
        fields = _checked({"label": label, "value": value, "description": description}, loc=["label"])
    except ValidationFailed as exc:
        raise BlockEditError(str(exc.detail[0]["msg"])) from None
    block = Block.objects.create(organization_id=organization_id, **fields)
    AgentBlock.objects.create(agent=agent, block=block, position=_next_position(agent))
    _announce(block=block, by="tool", run_id=run_id, message_id=message_id)
    return block


@transaction.atomic
def memory_delete_block(*, organization_id: Any, agent_id: Any, label: str) -> None:
    """Take a block out of the calling agent's memory; the block itself goes when no other agent uses it."""
    link = _link_for_edit(organization_id, agent_id, label)
    block = Block.objects.select_for_update().get(pk=link.block_id)
    if block.read_only:
        raise BlockEditError(READ_ONLY_ERROR)
    link.delete()
    if not AgentBlock.objects.filter(block=block).exists():
        block.delete()


@transaction.atomic
def memory_relabel_block(
    *,
    organization_id: Any,
    agent_id: Any,
    label: str,
    new_label: str | None = None,
    description: str | None = None,
    run_id: Any = None,
    message_id: Any = None,
) -> Block:
    """Rename the calling agent's block ``label`` and/or change its description (the ``memory`` tool's ``rename``)."""
    link = _link_for_edit(organization_id, agent_id, label)
    block = Block.objects.select_for_update().get(pk=link.block_id)
    if block.read_only:
        raise BlockEditError(READ_ONLY_ERROR)
    if new_label and new_label != block.label:
        clash = AgentBlock.objects.filter(
            agent__in=AgentBlock.objects.filter(block=block).values("agent"), block__label=new_label
        )
        if clash.exists():
            raise BlockEditError(f"A memory block with label '{new_label}' already exists.")
        block.label = new_label
    if description is not None:
        block.description = description
    return block_save(block=block, by="tool", run_id=run_id, message_id=message_id)
