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
from django.conf import settings
from django.db import connection
from django.db.models import Field, Model
from django.utils.module_loading import import_string

from agents.models import Agent, AgentBlock, Message, MessageRole, Passage

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


# The agent's model and counts in one statement, written out: built with the ORM (two
# correlated ``Subquery`` counts) it cost more to compile than the rest of a turn's step
# together (1.1 ms of CPU against 0.1 ms here; issue 15). Names come from the models; the
# organization in the WHERE is what ``Agent.objects.for_org`` scoped before.
_COUNTS_SQL = """
SELECT a.{model},
    (SELECT COUNT(*) FROM {passage} p WHERE p.{passage_agent} = a.{pk}),
    (SELECT COUNT(*) FROM {message} m
        WHERE m.{message_agent} = a.{pk} AND m.{seq} < a.{start} AND m.{role} <> %s)
FROM {agent} a WHERE a.{pk} = %s AND a.{organization} = %s
"""


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, Field) and field.column  # a concrete column, not a reverse relation
    return connection.ops.quote_name(field.column)


@functools.cache
def _counts_sql() -> str:
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
        )
    }
    for name, model in (("agent", Agent), ("passage", Passage), ("message", Message)):
        names[name] = connection.ops.quote_name(model._meta.db_table)
    return _COUNTS_SQL.format(**names)


def _agent_counts(organization_id: Any, agent_id: Any) -> tuple[str, int, int] | None:
    """The agent's model handle, archival passages and rows before its window (its recall), or None."""
    params = [
        MessageRole.SYSTEM.value,
        Agent._meta.pk.get_db_prep_value(agent_id, connection),
        Agent._meta.get_field("organization").get_db_prep_value(organization_id, connection),
    ]
    with connection.cursor() as cursor:
        cursor.execute(_counts_sql(), params)
        row = cursor.fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]))


def memory_for_agent(*, organization_id: Any, agent_id: Any, line_numbers: bool | None = None) -> str:
    """The agent's compiled memory section, read from the database now (two queries)."""
    counts = _agent_counts(organization_id, agent_id)
    if counts is None:
        return ""
    model, archival_count, recall_count = counts
    links = (
        AgentBlock.objects.filter(agent_id=agent_id)
        .order_by("position", "id")
        .values_list(
            "block__label",
            "block__value",
            "block__description",
            "block__limit",
            "block__read_only",
            "block__updated_at",
        )
    )
    blocks, changes = [], []
    for label, value, description, limit, read_only, updated_at in links:
        blocks.append(BlockView(label, value, description, limit, read_only))
        changes.append(updated_at)
    return compile_memory(
        blocks,
        agent_id=f"{Agent.id_prefix}-{agent_id}",
        last_modified=max(changes) if changes else None,
        recall_count=recall_count,
        archival_count=archival_count,
        line_numbers=numbered_lines(model) if line_numbers is None else line_numbers,
        sections=extra_sections(organization_id=organization_id, agent_id=agent_id),
    )


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


@dataclass(frozen=True)
class MemorySection:
    """The engine's ``MemorySource`` for one agent: compiled from the rows each time it is asked.

    ``skills`` (an ``available_skills`` block, rendered for one request and never stored) follows it."""

    organization_id: Any
    agent_id: Any
    skills: str = ""

    async def compile(self) -> str:
        return await sync_to_async(self.compile_sync)()

    def compile_sync(self) -> str:
        memory = memory_for_agent(organization_id=self.organization_id, agent_id=self.agent_id)
        return f"{memory.rstrip(chr(10))}\n\n{self.skills}" if self.skills else memory


def memory_source(agent: Agent, skills: Sequence[Skill] = ()) -> MemorySection:
    """What ``agents.runs.turns.model_settings`` puts in ``ModelSettings.memory``."""
    return MemorySection(organization_id=agent.organization_id, agent_id=agent.id, skills=available_skills(skills))
