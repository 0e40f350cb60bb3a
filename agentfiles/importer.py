"""``POST /v1/agents/import``: an agent file becomes this organization's agents, in one transaction.

Order as Letta's (LETTA_PLATFORM.md §1.4): tools (upserted by name), blocks (always new,
shared within the file as the file shares them), agents (ids remapped, the model resolved
against this organization's providers), then each agent's messages. Unlike Letta's, the
import is atomic: a file that fails anywhere leaves nothing behind.

What the file holds that this server does not run (MCP servers, folders and files, groups,
skills) is kept on the ``AgentFileImport`` and reported, never dropped silently. Model
endpoints and keys in the file are never used: only its handle, resolved here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import DataError, transaction

from agentfiles.messages import row_fields
from agentfiles.models import AgentFileImport, ImportedAgent
from agentfiles.schema import AgentFileError, Document, mapping, read_document
from agentfiles.tools import import_tools
from agents import services
from agents.errors import InvalidArgument
from agents.llm.agent_settings import (
    LLM_CONFIG_FIELDS,
    handle_from_llm_config,
    validate_embedding_handle,
    validate_model_handle,
)
from agents.memory.models import DEFAULT_BLOCK_CHAR_LIMIT, Block
from agents.models import DEFAULT_SYSTEM_PROMPT, Agent, Message

if TYPE_CHECKING:
    from accounts.models import Organization, User
    from tools.models import Tool

KEPT = ("mcp_servers", "sources", "files", "groups", "skills")
# Rule types the engine does not enforce (``agents.services.UNENFORCED_TOOL_RULE_TYPES``): kept, reported.
UNENFORCED_RULES = services.UNENFORCED_TOOL_RULE_TYPES


@dataclass(frozen=True)
class ImportOptions:
    """Letta's form fields (the deprecated names resolved by the view)."""

    name: str | None = None
    append_copy_suffix: bool = True
    override_existing_tools: bool = True
    strip_messages: bool = False
    secrets: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    embedding: str | None = None


@dataclass
class ImportResult:
    record: AgentFileImport
    agents: list[Agent]
    warnings: list[str]
    unresolved: dict[str, list[str]]


@dataclass(frozen=True)
class AgentPreview:
    name: str
    model: str
    blocks: list[str]
    tools: list[str]
    messages: int


@dataclass(frozen=True)
class ImportPreview:
    """What an import of the file would create, found by running it and rolling it back."""

    agents: list[AgentPreview]
    warnings: list[str]
    unresolved: dict[str, list[str]]


class _DryRun(Exception):
    """Raised inside a preview's transaction to roll its import back."""


def check_size(size: int) -> None:
    limit = settings.AGENTFILE_MAX_BYTES
    if size > limit:
        raise AgentFileError(f"The agent file is {size} bytes, over this server's limit of {limit} bytes.")


def agentfile_import(
    *,
    organization: Organization,
    raw: bytes,
    options: ImportOptions,
    created_by: User | None = None,
    file_name: str = "",
) -> ImportResult:
    """Create the file's agents with their tools, blocks, rules and history; ``AgentFileError`` (400) if
    the file is not one this server can import, with nothing written."""
    check_size(len(raw))
    document = read_document(raw)
    try:
        with transaction.atomic():
            return _import(organization, document, options, created_by=created_by, file_name=file_name)
    except DataError as exc:  # text the database cannot store (a NUL character, an overlong value)
        raise AgentFileError(f"Import failed: the file holds a value this server cannot store ({exc}).") from exc


def agentfile_preview(*, organization: Organization, raw: bytes, options: ImportOptions) -> ImportPreview:
    """What ``agentfile_import`` would create from ``raw``, with nothing written; its ``AgentFileError`` if any."""
    check_size(len(raw))
    document = read_document(raw)
    preview: ImportPreview | None = None
    try:
        with transaction.atomic():
            result = _import(organization, document, options, created_by=None, file_name="")
            preview = ImportPreview(
                agents=[
                    AgentPreview(
                        name=agent.name,
                        model=agent.model,
                        blocks=list(agent.agent_blocks.values_list("block__label", flat=True)),
                        tools=sorted(agent.tools.values_list("name", flat=True)),
                        messages=agent.messages.count(),
                    )
                    for agent in result.agents
                ],
                warnings=result.warnings,
                unresolved=result.unresolved,
            )
            raise _DryRun
    except _DryRun:
        pass
    assert preview is not None
    return preview


def _import(
    organization: Organization, document: Document, options: ImportOptions, *, created_by: User | None, file_name: str
) -> ImportResult:
    tools = import_tools(
        organization=organization,
        entries=document["tools"],
        override_existing=options.override_existing_tools,
        created_by=created_by,
    )
    warnings = list(tools.warnings)
    blocks = _blocks(organization, document["blocks"], warnings)
    record = AgentFileImport.objects.create(
        organization=organization,
        created_by=created_by,
        file_name=file_name[:255],
        kept={key: document[key] for key in KEPT},  # type: ignore[literal-required]
    )
    agents = []
    for entry in document["agents"]:
        agent = _agent(organization, entry, options, tools=tools.tools, blocks=blocks, warnings=warnings)
        agent.created_by = created_by
        agent.save(update_fields=["created_by"])
        _messages(agent, [] if options.strip_messages else entry.get("messages") or [], entry)
        ImportedAgent.objects.create(
            record=record,
            agent=agent,
            file_id=str(entry.get("id") or ""),
            source_ids=[s for s in entry.get("source_ids") or [] if isinstance(s, str)],
            files_agents=[f for f in entry.get("files_agents") or [] if isinstance(f, dict)],
        )
        agents.append(agent)
    unresolved = _unresolved(document)
    warnings += _kept_warnings(document, unresolved)
    record.warnings = warnings
    record.save(update_fields=["warnings"])
    return ImportResult(record=record, agents=agents, warnings=warnings, unresolved=unresolved)


def _blocks(organization: Organization, entries: list[dict[str, Any]], warnings: list[str]) -> dict[str, Block]:
    """New blocks for the file's, by file id; a value over its limit raises the limit to fit."""
    made: dict[str, Block] = {}
    for entry in entries:
        value = str(entry.get("value") or "")
        limit = entry.get("limit")
        limit = (
            limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else DEFAULT_BLOCK_CHAR_LIMIT
        )
        if len(value) > limit:
            warnings.append(
                f"Block {entry['label']!r} holds {len(value)} characters, over its limit of {limit}; "
                f"the limit was raised to {len(value)}."
            )
            limit = len(value)
        made[entry["id"]] = Block.objects.create(
            organization=organization,
            label=str(entry["label"])[:200],
            value=value,
            limit=limit,
            description=str(entry.get("description") or ""),
            read_only=bool(entry.get("read_only")),
            metadata=mapping(entry.get("metadata")),
            tags=[tag for tag in entry.get("tags") or [] if isinstance(tag, str)],
        )
    return made


def _model(
    organization: Organization, entry: dict[str, Any], options: ImportOptions, warnings: list[str]
) -> tuple[str, dict[str, Any]]:
    """The model handle (the override, else the file's if this organization can use it) and the file's
    model settings that go with it (none with an override: the handle's defaults apply)."""
    if options.model:
        return validate_model_handle(options.model, organization=organization), {}
    config = mapping(entry.get("llm_config"))
    handle = handle_from_llm_config(config) or ""
    try:
        validate_model_handle(handle, organization=organization)
    except InvalidArgument:
        fallback = settings.DEFAULT_MODEL_HANDLE
        warnings.append(
            f"Agent {entry.get('name')!r}: the model {handle!r} is not available in this organization; "
            f"it uses {fallback} (choose another with the model option)."
        )
        return fallback, {}
    return handle, {key: config[key] for key in LLM_CONFIG_FIELDS if config.get(key) is not None}


def _embedding(organization: Organization, entry: dict[str, Any], options: ImportOptions) -> str | None:
    if options.embedding:
        return validate_embedding_handle(options.embedding, organization=organization)
    config = mapping(entry.get("embedding_config"))
    handle = config.get("handle") or (
        f"{config['embedding_endpoint_type']}/{config['embedding_model']}"
        if config.get("embedding_endpoint_type") and config.get("embedding_model")
        else None
    )
    try:
        return validate_embedding_handle(str(handle), organization=organization) if handle else None
    except InvalidArgument:
        return None  # the server's default embedding


def _rules(
    entry: dict[str, Any], attached: set[str], warnings: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The file's tool rules the services take, and those kept as given though not enforced here."""
    taken: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    for rule in entry.get("tool_rules") or []:
        if not isinstance(rule, dict) or rule.get("type") not in services.TOOL_RULE_TYPES:
            warnings.append(
                f"Agent {entry.get('name')!r}: the tool rule {rule!r} is not one this server knows; it was left out."
            )
        elif rule.get("tool_name") not in attached:
            warnings.append(
                f"Agent {entry.get('name')!r}: the {rule['type']} rule on {rule.get('tool_name')!r} was left out: "
                "that tool is not attached."
            )
        elif rule["type"] in UNENFORCED_RULES:
            warnings.append(
                f"Agent {entry.get('name')!r}: the {rule['type']} rule on {rule['tool_name']!r} "
                "is kept but not enforced here."
            )
            kept.append(dict(rule))
        elif rule not in taken:
            taken.append(dict(rule))
    return taken, kept


def _agent_name(entry: dict[str, Any], options: ImportOptions) -> str:
    if options.name:
        return options.name[:200]
    name = str(entry.get("name") or "imported-agent")
    return f"{name}_copy"[:200] if options.append_copy_suffix else name[:200]


def _agent(
    organization: Organization,
    entry: dict[str, Any],
    options: ImportOptions,
    *,
    tools: dict[str, Tool],
    blocks: dict[str, Block],
    warnings: list[str],
) -> Agent:
    handle, llm_fields = _model(organization, entry, options, warnings)
    attached = list(dict.fromkeys(tools[i] for i in entry.get("tool_ids") or [] if i in tools))
    taken, kept = _rules(entry, {tool.name for tool in attached}, warnings)
    secret_keys = entry.get("secrets") or entry.get("tool_exec_environment_variables") or {}
    metadata = mapping(entry.get("metadata"))
    compaction = mapping(entry.get("compaction_settings"))
    try:
        agent = services.agent_create(
            organization=organization,
            name=_agent_name(entry, options),
            model=handle,
            embedding=_embedding(organization, entry, options),
            system=str(entry.get("system") or "") or DEFAULT_SYSTEM_PROMPT,
            description=str(entry.get("description") or ""),
            tool_ids=[tool.public_id for tool in attached],
            tool_rules=taken,
            tags=[tag for tag in entry.get("tags") or [] if isinstance(tag, str)],
            metadata=metadata,
            llm_config=llm_fields,
            tool_env_vars={str(key): str(options.secrets.get(key, "")) for key in secret_keys},
            block_ids=[blocks[i].public_id for i in entry.get("block_ids") or [] if i in blocks],
            compaction_settings={k: v for k, v in compaction.items() if v is not None} or None,
            initial_message_sequence=[],
        )
    except InvalidArgument as exc:
        raise AgentFileError(
            f"Agent {entry.get('name')!r}: {str(exc.detail).removeprefix('INVALID_ARGUMENT: ')}"
        ) from exc
    if kept:
        agent.tool_rules = [*agent.tool_rules, *kept]
        agent.save(update_fields=["tool_rules"])
    return agent


def _messages(agent: Agent, messages: list[dict[str, Any]], entry: dict[str, Any]) -> None:
    """The agent's rows: its history, then its window (the system row with the agent's prompt first).

    Messages outside the file's window come first, in file order; the window's follow in its
    order. The window opens with a system row holding the agent's system prompt (this server
    compiles memory into it at each request), whether or not the file had one.
    """
    by_id = {m["id"]: m for m in messages}
    window = [by_id[i] for i in entry.get("in_context_message_ids") or [] if i in by_id]
    in_window = {id(m) for m in window}
    history = [m for m in messages if id(m) not in in_window]
    if window and window[0].get("role") == "system":
        window = window[1:]
    names: dict[str, str] = {}
    fields = [row_fields(m, names) for m in history]
    start = len(fields)
    fields.append(row_fields({"role": "system", "content": [{"type": "text", "text": agent.system}]}, names))
    fields += [row_fields(m, names) for m in window]
    Message.objects.filter(agent=agent).delete()
    Message.objects.bulk_create(
        [Message(organization_id=agent.organization_id, agent=agent, seq=seq, **row) for seq, row in enumerate(fields)]
    )
    Agent.objects.filter(pk=agent.pk).update(context_start_seq=start)
    agent.context_start_seq = start


def _unresolved(document: Document) -> dict[str, list[str]]:
    """References this server cannot follow: MCP servers and folders (it has neither here yet)."""
    return {
        "mcp_servers": [str(s.get("server_name") or s.get("id")) for s in document["mcp_servers"]],
        "folders": [str(s.get("name") or s.get("id")) for s in document["sources"]],
    }


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def _kept_warnings(document: Document, unresolved: dict[str, list[str]]) -> list[str]:
    notes = []
    if unresolved["mcp_servers"]:
        notes.append(
            f"MCP servers {', '.join(unresolved['mcp_servers'])} are not on this server; kept with the import."
        )
    if unresolved["folders"]:
        notes.append(
            f"Folders {', '.join(unresolved['folders'])} ({_files(len(document['files']))}) are not on this server; "
            "kept with the import and exported again."
        )
    for group in document["groups"]:
        kind = (group.get("manager_config") or {}).get("manager_type", "group")
        notes.append(f"The {kind} group {group.get('id')} is kept with the import; its agents run separately here.")
    if document["skills"]:
        notes.append(f"{len(document['skills'])} skills are kept with the import.")
    return notes
