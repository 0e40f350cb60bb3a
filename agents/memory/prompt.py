"""The compiled memory section of the system prompt, in Letta's format.

``compile_memory`` renders blocks and metadata; ``MemorySection`` reads them from the
database for one agent, at the start of every step (the engine awaits ``compile()``).
Nothing in the section depends on the clock: it says when memory last changed, not
when it was compiled, so the prompt stays byte-identical between turns while memory
is unchanged and provider prompt caches keep working.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.apps import apps
from django.conf import settings
from django.db import connection
from django.db.models import Field, Model
from django.utils.dateparse import parse_datetime
from django.utils.module_loading import import_string

from agents.models import Agent, AgentBlock, Block, Conversation, Message, MessageRole, Passage

CORE_MEMORY_PLACEHOLDER = "{CORE_MEMORY}"
LINE_NUMBER_WARNING = (
    "# NOTE: Line numbers shown below (with arrows like '1→') are to help during editing. "
    "Do NOT include line number prefixes in your memory edit tool calls."
)


@dataclass(frozen=True)
class BlockView:
    label: str
    value: str
    description: str = ""
    limit: int = 20_000
    read_only: bool = False


def compile_blocks(blocks: Sequence[BlockView], *, line_numbers: bool = False) -> str:
    """``<memory_blocks>…</memory_blocks>``: each block's description, metadata and value."""
    out = ["<memory_blocks>\nThe following memory blocks are currently engaged in your core memory unit:\n\n"]
    for index, block in enumerate(blocks):
        out.append(f"<{block.label}>\n<description>\n{block.description}\n</description>\n<metadata>")
        if block.read_only:
            out.append("\n- read_only=true")
        out.append(f"\n- chars_current={len(block.value)}\n- chars_limit={block.limit}\n</metadata>\n")
        if line_numbers:
            out.append(f"<warning>\n{LINE_NUMBER_WARNING}\n</warning>\n<value>\n")
            out.extend(f"{number}→ {line}\n" for number, line in enumerate(block.value.split("\n"), start=1))
            out.append("</value>\n")
        else:
            out.append(f"<value>\n{block.value}\n</value>\n")
        out.append(f"</{block.label}>\n")
        if index != len(blocks) - 1:
            out.append("\n")
    out.append("\n</memory_blocks>")
    return "".join(out)


def letta_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %I:%M:%S %p %Z%z")


def compile_metadata(*, agent_id: str, last_modified: datetime | None, recall_count: int, archival_count: int) -> str:
    """``<memory_metadata>…</memory_metadata>``: the agent, when memory last changed, recall and archival sizes."""
    lines = ["<memory_metadata>", f"- AGENT_ID: {agent_id}"]
    if last_modified is not None:
        lines.append(f"- Memory blocks were last modified: {letta_time(last_modified)}")
    lines.append(
        f"- {recall_count} previous messages between you and the user are stored in recall memory "
        "(use tools to access them)"
    )
    if archival_count > 0:
        lines.append(
            f"- {archival_count} total memories you created are stored in archival memory (use tools to access them)"
        )
    lines.append("</memory_metadata>")
    return "\n".join(lines)


def compile_memory(
    blocks: Sequence[BlockView],
    *,
    agent_id: str,
    last_modified: datetime | None = None,
    recall_count: int = 0,
    archival_count: int = 0,
    line_numbers: bool = False,
    sections: Sequence[str] = (),
) -> str:
    """The whole memory section: blocks, the extra ``sections`` (each after a blank line), a blank line, metadata."""
    metadata = compile_metadata(
        agent_id=agent_id, last_modified=last_modified, recall_count=recall_count, archival_count=archival_count
    )
    extra = "".join(f"\n\n{section}" for section in sections if section)
    return f"{compile_blocks(blocks, line_numbers=line_numbers)}{extra}\n\n{metadata}"


SectionSource = Callable[..., str]
"""``source(organization_id=…, agent_id=…)``: a section of the memory that a room above this one owns."""


@functools.cache
def _section_sources(paths: tuple[str, ...]) -> tuple[SectionSource, ...]:
    return tuple(import_string(path) for path in paths)


def extra_sections(*, organization_id: Any, agent_id: Any) -> list[str]:
    """The sections ``settings.MEMORY_SECTIONS`` names (dotted paths), compiled after the memory blocks.

    The hook by which a room that may not be imported here adds to the prompt: the folders'
    ``<directories>`` (``folders.context.directories_section``)."""
    sources = _section_sources(tuple(getattr(settings, "MEMORY_SECTIONS", ())))
    return [source(organization_id=organization_id, agent_id=agent_id) for source in sources]


def numbered_lines(handle: str) -> bool:
    """Letta numbers block lines for Anthropic models on ``letta_v1_agent``."""
    return handle.partition("/")[0] == "anthropic"


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, Field) and field.column  # a concrete column, not a reverse relation
    return connection.ops.quote_name(field.column)


# The agent's model, its counts, which extra sections have rows, and its blocks: one statement
# (issue 24), written out: built with the ORM (two correlated ``Subquery`` counts) it cost more to
# compile than the rest of a turn's step together (1.1 ms of CPU against 0.1 ms here; issue 15).
# Names come from the models; the organization in the WHERE is what ``Agent.objects.for_org``
# scoped before. The agent's row and counts are read once (``MATERIALIZED``), then joined with its
# blocks in order.
_MEMORY_SQL = """
WITH a AS MATERIALIZED (
    SELECT ag.{pk} AS id, ag.{model} AS model,
        (SELECT COUNT(*) FROM {passage} p WHERE p.{passage_agent} = ag.{pk}) AS archival,
        (SELECT COUNT(*) FROM {message} m
            WHERE m.{message_agent} = ag.{pk} AND m.{seq} < ag.{start} AND m.{role} <> %s) AS recall{attached}
    FROM {agent} ag WHERE ag.{pk} = %s AND ag.{organization} = %s
)
SELECT a.model, a.archival, a.recall{attached_columns}, b.{label}, b.{value}, b.{description}, b.{limit},
    b.{read_only}, b.{updated_at}
FROM a LEFT JOIN {agent_block} ab ON ab.{link_agent} = a.id LEFT JOIN {block} b ON b.{block_pk} = ab.{link_block}
ORDER BY ab.{position}, ab.{link_pk}
"""


def _attached_via(source: SectionSource) -> tuple[str, str] | None:
    """The table and agent column of a section's links (its ``attached_via``, ``"app.Model"``), if it says:
    without a row there, the section is empty and is not asked."""
    label = getattr(source, "attached_via", None)
    if label is None:
        return None
    model = apps.get_model(label)
    return connection.ops.quote_name(model._meta.db_table), _column(model, "agent")


@functools.cache
def _memory_sql(paths: tuple[str, ...]) -> str:
    names = {
        name: _column(model, field)
        for name, model, field in (
            ("model", Agent, "model"),
            ("pk", Agent, "id"),
            ("start", Agent, "context_start_seq"),
            ("organization", Agent, "organization"),
            ("passage_agent", Passage, "agent"),
            ("message_agent", Message, "agent"),
            ("seq", Message, "seq"),
            ("role", Message, "role"),
            ("label", Block, "label"),
            ("value", Block, "value"),
            ("description", Block, "description"),
            ("limit", Block, "limit"),
            ("read_only", Block, "read_only"),
            ("updated_at", Block, "updated_at"),
            ("block_pk", Block, "id"),
            ("link_agent", AgentBlock, "agent"),
            ("link_block", AgentBlock, "block"),
            ("position", AgentBlock, "position"),
            ("link_pk", AgentBlock, "id"),
        )
    }
    for name, model in (
        ("agent", Agent),
        ("passage", Passage),
        ("message", Message),
        ("block", Block),
        ("agent_block", AgentBlock),
    ):
        names[name] = connection.ops.quote_name(model._meta.db_table)
    links = [_attached_via(source) for source in _section_sources(paths)]
    attached = [
        f",\n        EXISTS (SELECT 1 FROM {table} s WHERE s.{column} = ag.{names['pk']}) AS s{index}"
        for index, link in enumerate(links)
        if link is not None
        for table, column in [link]
    ]
    columns = [f", a.s{index}" for index, link in enumerate(links) if link is not None]
    return _MEMORY_SQL.format(**names, attached="".join(attached), attached_columns="".join(columns))


def memory_for_agent(
    *, organization_id: Any, agent_id: Any, line_numbers: bool | None = None, conversation_id: Any = None
) -> str:
    """The agent's compiled memory section, read from the database now (one query, and one for each
    extra section that has rows: the folders'). On a conversation's thread its isolated blocks stand in
    for the agent's blocks of their labels (one query more, for a conversation only)."""
    return memory_and_scope(
        organization_id=organization_id, agent_id=agent_id, line_numbers=line_numbers, conversation_id=conversation_id
    )[0]


def memory_and_scope(
    *, organization_id: Any, agent_id: Any, line_numbers: bool | None = None, conversation_id: Any = None
) -> tuple[str, bool]:
    """``memory_for_agent``, and whether the section came from the agent's own rows alone: its row, blocks,
    their links and its passage and recall counts (what ``Agent.setup_revision`` covers), with no extra
    section asked and no conversation's blocks."""
    paths = tuple(getattr(settings, "MEMORY_SECTIONS", ()))
    sources = _section_sources(paths)
    params = [
        MessageRole.SYSTEM.value,
        Agent._meta.pk.get_db_prep_value(agent_id, connection),
        Agent._meta.get_field("organization").get_db_prep_value(organization_id, connection),
    ]
    with connection.cursor() as cursor:
        cursor.execute(_memory_sql(paths), params)
        rows = cursor.fetchall()
    if not rows:
        return "", False
    model, archival_count, recall_count = str(rows[0][0]), int(rows[0][1]), int(rows[0][2])
    linked = iter(rows[0][3 : 3 + sum(1 for s in sources if _attached_via(s) is not None)])
    asked = [_attached_via(source) is None or bool(next(linked)) for source in sources]
    blocks, changes = [], []
    for label, value, description, limit, read_only, updated_at in (row[-6:] for row in rows):
        if label is None:  # no block: the agent's row alone
            continue
        blocks.append(BlockView(label, value, description, int(limit), bool(read_only)))
        changes.append(_aware(updated_at))
    if conversation_id is not None:
        blocks, changes = _with_isolated(blocks, changes, conversation_id)
    own_rows_only = conversation_id is None and not any(asked)
    memory = compile_memory(
        blocks,
        agent_id=f"{Agent.id_prefix}-{agent_id}",
        last_modified=max(changes) if changes else None,
        recall_count=recall_count,
        archival_count=archival_count,
        line_numbers=numbered_lines(model) if line_numbers is None else line_numbers,
        sections=[
            source(organization_id=organization_id, agent_id=agent_id) if ask else ""
            for source, ask in zip(sources, asked, strict=True)
        ],
    )
    return memory, own_rows_only


def _aware(value: Any) -> datetime:
    """A timestamp column read by a raw cursor (SQLite gives its text)."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    parsed = parse_datetime(str(value))
    assert parsed is not None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Skill:
    """A skill the client offers with its request (Letta's ``client_skills`` item)."""

    name: str
    description: str
    location: str


SKILL_FILE = "SKILL.md"


def available_skills(skills: Sequence[Skill]) -> str:
    """Letta's ``<available_skills>`` block (``compile_available_skills``; LETTA_CONVERSATIONS §4.2), or ``""``.

    A name seen already is skipped; only a description's first line shows. A location
    ``…/<name>/SKILL.md`` groups under the directory above ``<name>`` as ``<name>/SKILL.md``;
    any other groups under its own directory. Roots are sorted, each followed by its tree.
    """
    roots: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for skill in skills:
        if skill.name in seen:
            continue
        seen.add(skill.name)
        location = skill.location or f"skills/{skill.name}/{SKILL_FILE}"
        directory, _, file_name = location.rpartition("/")
        parent, _, last = directory.rpartition("/")
        if file_name == SKILL_FILE and last == skill.name:
            root, parts = parent or "/", [last, file_name]
        else:
            root, parts = directory or "/", [file_name]
        description = (skill.description or "").strip().splitlines()
        node = roots.setdefault(root, {})
        for part in parts[:-1]:
            node = node.setdefault(part + "/", {})
        node[parts[-1]] = f"{parts[-1]} ({description[0]})" if description and description[0] else parts[-1]
    if not roots:
        return ""
    blocks = ["\n".join([root, *_tree(roots[root], "")]) for root in sorted(roots)]
    return "<available_skills>\n" + "\n\n".join(blocks) + "\n</available_skills>"


def _tree(node: dict[str, Any], prefix: str) -> list[str]:
    """The lines of one directory: subdirectories first, then files, each sorted."""
    names = sorted(k for k in node if k.endswith("/")) + sorted(k for k in node if not k.endswith("/"))
    lines: list[str] = []
    for position, name in enumerate(names):
        last = position == len(names) - 1
        child = node[name]
        label = name if isinstance(child, dict) else child
        lines.append(f"{prefix}{'└── ' if last else '├── '}{label}")
        if isinstance(child, dict):
            lines += _tree(child, prefix + ("    " if last else "│   "))
    return lines


def _with_isolated(
    blocks: list[BlockView], changes: list[datetime], conversation_id: Any
) -> tuple[list[BlockView], list[datetime]]:
    """``blocks`` with a conversation's isolated copies in the places of the blocks of their labels."""
    isolated = {block.label: block for block in isolated_blocks(conversation_id)}
    if not isolated:
        return blocks, changes
    for index, view in enumerate(blocks):
        own = isolated.get(view.label)
        if own is not None:
            blocks[index] = BlockView(own.label, own.value, own.description, int(own.limit), bool(own.read_only))
            changes[index] = own.updated_at
    return blocks, changes


def isolated_blocks(conversation_id: Any) -> list[Block]:
    """A conversation's isolated blocks: its own copies of some of its agent's blocks (Letta's
    ``isolated_block_labels``)."""
    links = Conversation.isolated_blocks.through.objects.filter(conversation_id=conversation_id)
    return list(Block.objects.filter(pk__in=links.values("block_id")))


@dataclass(frozen=True)
class MemorySection:
    """The engine's ``MemorySource`` for one agent: compiled from the rows each time it is asked.

    ``skills`` (an ``available_skills`` block, rendered for one request and never stored) follows it."""

    organization_id: Any
    agent_id: Any
    skills: str = ""
    conversation_id: Any = None

    async def compile(self) -> str:
        return await sync_to_async(self.compile_sync)()

    def compile_sync(self) -> str:
        memory = memory_for_agent(
            organization_id=self.organization_id, agent_id=self.agent_id, conversation_id=self.conversation_id
        )
        return f"{memory.rstrip(chr(10))}\n\n{self.skills}" if self.skills else memory


def memory_source(agent: Agent, skills: Sequence[Skill] = (), conversation_id: Any = None) -> MemorySection:
    """What ``agents.runs.turns.model_settings`` puts in ``ModelSettings.memory`` (for a conversation's
    thread, with its isolated blocks)."""
    return MemorySection(
        organization_id=agent.organization_id,
        agent_id=agent.id,
        skills=available_skills(skills),
        conversation_id=conversation_id,
    )
