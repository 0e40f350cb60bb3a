"""Writes on agents: create, update, delete, tool attachment and the per-agent approval policy.

Keyword-only and transactional. Tool approval has one source of truth, the
``AgentTool.approval_policy`` (``inherit``, ``ask``, ``allow``, ``ask_when`` + a
condition), written only by ``agent_set_tool_policy``; Letta's boolean override
(``requires_approval``) is a view of it. ``requires_approval`` tool rules given by a
client are turned into policies and never stored in ``Agent.tool_rules``;
``agents.wire.messages.agent_state`` derives them back.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.errors import ApplicationError, InvalidArgument, NotFound
from agents.llm.agent_settings import (
    DEFAULT_MAX_REASONING_TOKENS,
    LLM_CONFIG_FIELDS,
    compaction_settings_merged,
    handle_from_llm_config,
    model_settings_fields,
    new_agent_settings,
    reasoning_defaults,
    validate_embedding_handle,
    validate_model_handle,
)
from agents.llm.handles import DEFAULT_EMBEDDING_HANDLE as DEFAULT_EMBEDDING_HANDLE
from agents.memory.archives import drop_unused_archives, own_archive_ids
from agents.memory.services import agent_blocks_init
from agents.models import DEFAULT_SYSTEM_PROMPT, Agent, Message, MessageRole, Step
from tools.builtins import default_registry
from tools.models import AgentTool, ApprovalPolicy, Tool, ToolKind, condition_problem, policy_for_override
from tools.services import builtin_tools_named

if TYPE_CHECKING:
    from accounts.models import Organization, User

TOOL_RULE_TYPES = frozenset(
    {
        "conditional",
        "constrain_child_tools",
        "continue_loop",
        "exit_loop",
        "max_count_per_step",
        "parent_last_tool",
        "required_before_exit",
        "requires_approval",
        "run_first",
    }
)
# Letta's rule types this server knows but does not enforce: refused (400) rather than silently ignored.
UNENFORCED_TOOL_RULE_TYPES = frozenset({"conditional", "parent_last_tool"})


# The built-ins ``include_base_tools`` attaches, per Letta agent type (Letta 0.13); other
# types get ``letta_v1_agent``'s. Archival tools are attached only through ``tool_ids``.
BASE_TOOLS: dict[str, tuple[str, ...]] = {
    "letta_v1_agent": ("conversation_search", "memory_insert", "memory_replace"),
    "memgpt_v2_agent": ("send_message", "conversation_search", "memory_insert", "memory_replace"),
    "memgpt_agent": ("send_message", "conversation_search", "core_memory_append", "core_memory_replace"),
}


def base_tools_for(organization: Organization, agent_type: str | None) -> list[Tool]:
    """The organization's built-in tools for an agent of ``agent_type``, created or refreshed as needed."""
    names = BASE_TOOLS.get(agent_type or "letta_v1_agent", BASE_TOOLS["letta_v1_agent"])
    return builtin_tools_named(organization=organization, names=names)


def _split_tool_rules(tool_rules: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], set[str]]:
    """Stored rules, and the names of tools that ``requires_approval`` rules gate."""
    stored: list[dict[str, Any]] = []
    gated: set[str] = set()
    for rule in tool_rules:
        if rule.get("type") not in TOOL_RULE_TYPES or not isinstance(rule.get("tool_name"), str):
            raise InvalidArgument(f"Unsupported tool rule {dict(rule)!r}", field="tool_rules")
        if rule["type"] in UNENFORCED_TOOL_RULE_TYPES:
            raise InvalidArgument(
                f"Tool rules of type {rule['type']!r} are not supported by this server; "
                f"use {', '.join(sorted(TOOL_RULE_TYPES - UNENFORCED_TOOL_RULE_TYPES))}.",
                field="tool_rules",
            )
        if rule["type"] == "requires_approval":
            gated.add(rule["tool_name"])
        else:
            stored.append({"prompt_template": None, **rule})
    return stored, gated


def check_attachable(tools: Iterable[Tool]) -> None:
    """Refuse built-ins this server cannot perform: a model is never offered a tool that only fails."""
    registry = default_registry()
    for tool in tools:
        builtin = registry.get(tool.name) if tool.kind == ToolKind.BUILTIN else None
        if tool.kind == ToolKind.BUILTIN and (builtin is None or not builtin.available):
            raise InvalidArgument(
                f"The built-in tool {tool.name} is not available on this server, so it cannot be attached to an agent.",
                field="tool_ids",
            )


def _tools_by_ids(organization: Organization, tool_ids: Sequence[str]) -> list[Tool]:
    wanted = [(raw, Tool.parse_public_id(raw)) for raw in tool_ids]
    found = {t.pk: t for t in Tool.objects.for_org(organization).filter(pk__in=[pk for _, pk in wanted if pk])}
    missing = [raw for raw, pk in wanted if pk not in found]
    if missing:
        raise InvalidArgument(f"Tools not found: {', '.join(map(str, missing))}", field="tool_ids")
    return list(dict.fromkeys(found[pk] for _, pk in wanted if pk))


def _tools_by_names(organization: Organization, names: Sequence[str]) -> list[Tool]:
    """The organization's tools named ``names``; a built-in's row is made when first named (Letta has them all).

    A name that is neither answers Letta's 400 ``Tools not found by name: {'a', 'b'}`` (a Python set,
    shown sorted): Letta Code matches that text, calls ``add-base-tools`` and tries again.
    """
    found = {t.name: t for t in Tool.objects.for_org(organization).filter(name__in=names)}
    missing = [name for name in names if name not in found]
    if missing:
        found |= {t.name: t for t in builtin_tools_named(organization=organization, names=missing)}
        missing = [name for name in names if name not in found]
    if missing:
        listed = ", ".join(repr(name) for name in sorted(set(missing)))
        raise ApplicationError(f"Tools not found by name: {{{listed}}}")
    return list(dict.fromkeys(found[name] for name in names))


def _apply_approval_rules(agent: Agent, gated: set[str]) -> None:
    """Make the attached tools named in ``gated`` need approval and every other one not."""
    attached = {at.tool.name: at for at in AgentTool.objects.filter(agent=agent).select_related("tool")}
    unknown = sorted(gated - attached.keys())
    if unknown:
        raise InvalidArgument(
            f"requires_approval rules name tools that are not attached: {', '.join(unknown)}", field="tool_rules"
        )
    for name, at in attached.items():
        if name in gated:
            wanted: bool | None = True
        else:
            wanted = False if at.tool.default_requires_approval else None
        if at.requires_approval != wanted:
            _write_policy(at, policy_for_override(wanted), "")


def login_message_text(now: datetime | None = None) -> str:
    """The first user message of a new agent, as Letta's ``letta_v1_agent`` writes it."""
    moment = (now or timezone.now()).astimezone(UTC)
    return json.dumps(
        {
            "type": "login",
            "last_login": "Never (first login)",
            "time": moment.strftime("%Y-%m-%d %I:%M:%S %p %Z%z"),
        },
        indent=2,
    )


# --- agents -------------------------------------------------------------------------------


def _attach_initial_tools(
    agent: Agent,
    *,
    tool_ids: Sequence[str],
    tool_names: Sequence[str],
    include_base_tools: bool,
    agent_type: str | None,
    gated: set[str],
) -> None:
    organization = agent.organization
    tools = _tools_by_ids(organization, tool_ids) + _tools_by_names(organization, tool_names)
    check_attachable(tools)
    if include_base_tools:
        tools += base_tools_for(organization, agent_type)
    AgentTool.objects.bulk_create([AgentTool(agent=agent, tool=tool) for tool in dict.fromkeys(tools)])
    if gated:
        _apply_approval_rules(agent, gated)


def _add_initial_rows(agent: Agent, sequence: Sequence[tuple[str, str]] | None = None) -> None:
    """The new agent's in-context rows: its system prompt, then ``sequence`` (Letta's login notice when ``None``)."""
    given = (
        [(MessageRole.USER, login_message_text())] if sequence is None else [(MessageRole(r), t) for r, t in sequence]
    )
    texts = [(MessageRole.SYSTEM, agent.system), *given]
    first = Agent.objects.hold(agent.pk).seqs.take(len(texts))
    Message.objects.bulk_create(
        [
            Message(
                organization_id=agent.organization_id,
                agent=agent,
                seq=first + offset,
                role=role,
                content=[{"type": "text", "text": text}],
            )
            for offset, (role, text) in enumerate(texts)
        ]
    )


def _new_agent_handles(organization: Organization, model: str | None, embedding: str | None) -> tuple[str, str]:
    """The model and embedding handles of a new agent (the server's defaults for what is not given), checked."""
    handle = validate_model_handle(model or settings.DEFAULT_MODEL_HANDLE, organization=organization)
    return handle, validate_embedding_handle(embedding or DEFAULT_EMBEDDING_HANDLE, organization=organization)


@transaction.atomic
def agent_create(
    *,
    organization: Organization,
    created_by: User | None = None,
    name: str | None = None,
    model: str | None = None,
    system: str | None = None,
    description: str = "",
    tool_ids: Sequence[str] = (),
    tool_names: Sequence[str] = (),
    tool_rules: Sequence[Mapping[str, Any]] = (),
    tags: Sequence[str] = (),
    embedding: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    llm_config: Mapping[str, Any] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    context_window: int | None = None,
    parallel_tool_calls: bool | None = None,
    enable_reasoner: bool | None = None,
    max_reasoning_tokens: int | None = None,
    reasoning_effort: str | None = None,
    tool_env_vars: Mapping[str, str] | None = None,
    include_base_tools: bool = False,
    agent_type: str | None = None,
    memory_blocks: Sequence[Mapping[str, Any]] | None = None,
    block_ids: Sequence[str] | None = None,
    model_settings: Mapping[str, Any] | None = None,
    compaction_settings: Mapping[str, Any] | None = None,
    initial_message_sequence: Sequence[tuple[str, str]] | None = None,
) -> Agent:
    """Create an agent with its tools and its initial in-context rows (system prompt, then Letta's login
    notice, or the ``(role, text)`` rows of ``initial_message_sequence``: ``[]`` gives the system row alone).

    ``model`` is a handle; an ``llm_config`` (Letta's shape) may give it and the model settings,
    Letta's ``model_settings`` apply over it, keyword settings over both. Tools are looked up
    in ``organization`` only; an unknown id or name is an ``InvalidArgument`` naming it.
    ``include_base_tools`` attaches the built-ins Letta gives an agent of ``agent_type``
    (``BASE_TOOLS``). Blocks come from ``memory_blocks`` (inline) and ``block_ids``
    (existing, same organization); with neither, the default ``human`` and ``persona``.
    """
    config = dict(llm_config or {})
    handle, embedding_handle = _new_agent_handles(organization, model or handle_from_llm_config(config), embedding)
    stored_rules, gated = _split_tool_rules(tool_rules)
    explicit = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "context_window": context_window,
        "parallel_tool_calls": parallel_tool_calls,
        "enable_reasoner": enable_reasoner,
        "max_reasoning_tokens": max_reasoning_tokens,
        "reasoning_effort": reasoning_effort,
    }
    agent = Agent.objects.create(
        organization=organization,
        created_by=created_by,
        name=name or f"agent-{secrets.token_hex(4)}",
        description=description or "",
        system=DEFAULT_SYSTEM_PROMPT if system is None else system,
        model=handle,
        embedding=embedding_handle,
        tags=list(tags),
        tool_rules=stored_rules,
        tool_env_vars=dict(tool_env_vars or {}),
        metadata=dict(metadata or {}),
        compaction_settings=dict(compaction_settings or {}),
        **new_agent_settings(handle, config, explicit, model_settings),
    )
    _attach_initial_tools(
        agent,
        tool_ids=tool_ids,
        tool_names=tool_names,
        include_base_tools=include_base_tools,
        agent_type=agent_type,
        gated=gated,
    )
    agent_blocks_init(agent=agent, memory_blocks=memory_blocks, block_ids=block_ids)
    _add_initial_rows(agent, initial_message_sequence)
    return agent


@transaction.atomic
def agent_update(
    *,
    agent: Agent,
    name: str | None = None,
    description: str | None = None,
    system: str | None = None,
    tags: Sequence[str] | None = None,
    tool_ids: Sequence[str] | None = None,
    tool_rules: Sequence[Mapping[str, Any]] | None = None,
    model: str | None = None,
    embedding: str | None = None,
    llm_config: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    tool_env_vars: Mapping[str, str] | None = None,
    reasoning: bool | None = None,
    model_settings: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    compaction_settings: Mapping[str, Any] | None = None,
) -> Agent:
    """Change the given fields (``None`` leaves a field as it is) and return the agent.

    ``model_settings`` (Letta's, ``model_settings_fields``) apply over ``llm_config``; then
    ``overrides``, the top-level settings given (``llm_config``'s field names: ``max_tokens``
    ``None`` clears it). ``compaction_settings`` merge into the stored ones.

    A new ``model`` handle resets the reasoning settings to that model's defaults,
    unless ``llm_config`` sets them. ``llm_config`` is Letta's shape: its handle (or
    endpoint type and model) and the settings ``temperature``, ``max_tokens``,
    ``context_window``, ``parallel_tool_calls``, ``enable_reasoner``,
    ``max_reasoning_tokens`` and ``reasoning_effort``. A new ``system`` prompt also
    rewrites the in-context system row. ``tool_ids`` replaces the attached tools;
    ``tool_rules`` replaces the rules, and its ``requires_approval`` rules become the
    attached tools' approval overrides.
    """
    agent = Agent.objects.select_for_update().get(pk=agent.pk)
    _update_model(agent, model, llm_config, model_settings, overrides, reasoning)
    if compaction_settings is not None:
        agent.compaction_settings = compaction_settings_merged(agent.compaction_settings or {}, compaction_settings)
    if embedding is not None:
        agent.embedding = validate_embedding_handle(embedding, organization=agent.organization)
    if name is not None:
        agent.name = name
    if description is not None:
        agent.description = description
    if tags is not None:
        agent.tags = list(tags)
    if metadata is not None:
        agent.metadata = dict(metadata)
    if tool_env_vars is not None:
        agent.tool_env_vars = dict(tool_env_vars)
    if system is not None and system != agent.system:
        agent.system = system
        system_row = Message.objects.in_context(agent).filter(role=MessageRole.SYSTEM).first()
        if system_row is not None:
            system_row.content = [{"type": "text", "text": system}]
            system_row.save(update_fields=["content"])

    if tool_ids is not None:
        tools = _tools_by_ids(agent.organization, tool_ids)
        check_attachable(tools)
        AgentTool.objects.filter(agent=agent).exclude(tool__in=tools).delete()
        for tool in tools:
            AgentTool.objects.get_or_create(agent=agent, tool=tool)
    if tool_rules is not None:
        stored_rules, gated = _split_tool_rules(tool_rules)
        agent.tool_rules = stored_rules
        _apply_approval_rules(agent, gated)

    agent.save()
    return agent


def _update_model(
    agent: Agent,
    model: str | None,
    llm_config: Mapping[str, Any] | None,
    model_settings: Mapping[str, Any] | None,
    overrides: Mapping[str, Any] | None,
    reasoning: bool | None,
) -> None:
    """``agent_update``'s model fields, in Letta's order: the handle's defaults, ``llm_config``,
    ``model_settings``, the top-level ``overrides``, then ``reasoning``."""
    config = dict(llm_config or {})
    handle = model or handle_from_llm_config(config)
    if handle and handle != agent.model:
        agent.model = validate_model_handle(handle, organization=agent.organization)
        for field, value in reasoning_defaults(handle).items():
            setattr(agent, field, value)
    if model_settings is not None:
        config.update(model_settings_fields(model_settings, enable_reasoner=agent.enable_reasoner))
    config.update(overrides or {})
    for field in LLM_CONFIG_FIELDS:
        if field not in config:
            continue
        value = config[field]
        if field == "reasoning_effort":
            value = value or ""
        elif value is None and field != "max_tokens":
            continue
        setattr(agent, field, value)
    if reasoning is not None:
        agent.enable_reasoner = reasoning
        if reasoning and not agent.max_reasoning_tokens:
            agent.max_reasoning_tokens = DEFAULT_MAX_REASONING_TOKENS


@transaction.atomic
@transaction.atomic
def agent_delete(*, agent: Agent) -> None:
    """Delete the agent with its messages, runs, steps, passages and tool attachments, and its own
    archive when nothing else holds it (``drop_unused_archives``)."""
    own = own_archive_ids(agent)
    agent.delete()
    drop_unused_archives(own)


def _check_same_org(agent: Agent, tool: Tool) -> None:
    if tool.organization_id != agent.organization_id:
        raise NotFound("Tool not found")


def _touch(agent: Agent) -> None:
    agent.updated_at = timezone.now()
    Agent.objects.filter(pk=agent.pk).update(updated_at=agent.updated_at)


@transaction.atomic
def agent_attach_tool(*, agent: Agent, tool: Tool) -> Agent:
    """Attach ``tool`` (idempotent); its approval follows the tool's default until overridden."""
    _check_same_org(agent, tool)
    check_attachable([tool])
    AgentTool.objects.get_or_create(agent=agent, tool=tool)
    _touch(agent)
    return agent


@transaction.atomic
def agent_detach_tool(*, agent: Agent, tool: Tool) -> Agent:
    """Detach ``tool`` (idempotent); the agent's approval override for it goes with it."""
    _check_same_org(agent, tool)
    AgentTool.objects.filter(agent=agent, tool=tool).delete()
    _touch(agent)
    return agent


@transaction.atomic
def agent_set_tool_policy(*, agent: Agent, tool_name: str, policy: str, condition: str = "") -> Agent:
    """Set the approval policy of the attached tool ``tool_name``: the one writer of approval policies.

    ``policy`` is an ``ApprovalPolicy`` value; ``ask_when`` needs a ``condition`` that parses
    and reads only the tool's arguments (``InvalidArgument`` says what is wrong), the other
    policies clear it.
    """
    if policy not in ApprovalPolicy.values:
        raise InvalidArgument(
            f"Unknown approval policy {policy!r}; use one of {', '.join(ApprovalPolicy.values)}.",
            field="approval_policy",
        )
    attached = AgentTool.objects.filter(agent=agent, tool__name=tool_name).select_related("tool").first()
    if attached is None:
        raise NotFound(f"Tool {tool_name} is not attached to agent {agent.public_id}")
    condition = condition.strip() if policy == ApprovalPolicy.ASK_WHEN else ""
    problem = condition_problem(policy, condition, attached.tool)
    if problem:
        raise InvalidArgument(problem, field="approval_condition")
    _write_policy(attached, policy, condition)
    _touch(agent)
    return agent


def _write_policy(attached: AgentTool, policy: str, condition: str) -> None:
    attached.approval_policy, attached.approval_condition = policy, condition
    attached.save(update_fields=["approval_policy", "approval_condition"])


def agent_set_tool_approval(*, agent: Agent, tool_name: str, requires_approval: bool | None) -> Agent:
    """Letta's override (the approval endpoint, the chat's "Always allow"): ``True`` asks,
    ``False`` allows, ``None`` follows the tool's default."""
    return agent_set_tool_policy(agent=agent, tool_name=tool_name, policy=policy_for_override(requires_approval))


@transaction.atomic
def step_feedback_set(*, step: Step, feedback: str | None, tags: list[str] | None = None) -> Step:
    """Letta's step feedback: ``feedback`` is always overwritten (none clears it); non-empty ``tags`` replace."""
    step.feedback = feedback or ""
    fields = ["feedback"]
    if tags:
        step.tags = list(dict.fromkeys(tags))
        fields.append("tags")
    step.save(update_fields=fields)
    return step
