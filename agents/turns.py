"""Wire the engine to one agent's rows: collaborators from the database, and the one way to run a turn.

Every transport (the blocking API call, the SSE stream, the Celery task, the
in-process executor) calls ``open_turn`` and iterates ``Turn.events()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async

from agents.conversation import DjangoConversationStore, snapshot
from agents.engine.context import ModelSettings
from agents.engine.inputs import TurnInput
from agents.engine.loop import Turn, TurnCollaborators, start_turn
from agents.engine.rules import ToolRules
from agents.engine.state import check_turn_input, preview_request
from agents.llm.registry import get_llm_client
from agents.models import Message
from tools.base import ToolContext, ToolSpec
from tools.runtime import DefaultToolRunner, tool_spec_for

if TYPE_CHECKING:
    from accounts.models import ApiKey, User
    from agents.llm.base import LLMClient
    from agents.models import Agent, Run
    from tools.base import ToolRunner


def model_settings(agent: Agent) -> ModelSettings:
    provider, _, model = agent.model.partition("/")
    return ModelSettings(
        handle=agent.model,
        model=model or provider,
        temperature=agent.temperature,
        max_tokens=agent.max_tokens,
        parallel_tool_calls=agent.parallel_tool_calls,
        reasoning=agent.enable_reasoner,
        reasoning_budget_tokens=agent.max_reasoning_tokens,
        reasoning_effort=agent.reasoning_effort or None,
        context_window=agent.context_window,
        max_steps=agent.max_steps,
    )


def tool_specs(agent: Agent) -> list[ToolSpec]:
    return [tool_spec_for(at) for at in agent.agent_tools.select_related("tool").order_by("created_at", "id")]


def default_llm_client(agent: Agent) -> LLMClient:
    """The agent's provider client, with bounded retries of transient errors."""
    client, _model = get_llm_client(agent.model, organization=agent.organization)
    return client


def default_tool_runner() -> ToolRunner:
    return DefaultToolRunner()


def _collaborators(
    agent: Agent,
    run: Run,
    *,
    sender_user: User | None,
    api_key: ApiKey | None,
    llm: LLMClient | None,
    tool_runner: ToolRunner | None,
    max_steps: int | None,
) -> TurnCollaborators:
    settings = model_settings(agent)
    if max_steps:
        settings = ModelSettings(**{**settings.__dict__, "max_steps": max_steps})
    sender: dict[str, Any] = {}
    if sender_user is not None and sender_user.is_authenticated:
        sender["user"] = sender_user.email
    if api_key is not None:
        sender["api_key"] = api_key.prefix
    return TurnCollaborators(
        store=DjangoConversationStore(
            agent=agent,
            run=run,
            sender_user_id=getattr(sender_user, "pk", None),
            sender_api_key_id=getattr(api_key, "pk", None),
        ),
        llm=llm or default_llm_client(agent),
        tool_runner=tool_runner or default_tool_runner(),
        tools=tool_specs(agent),
        settings=settings,
        rules=ToolRules.from_json(agent.tool_rules),
        tool_context=ToolContext(
            organization_id=agent.organization_id,
            agent_id=agent.id,
            run_id=run.id,
            env_vars={str(k): str(v) for k, v in (agent.tool_env_vars or {}).items()},
        ),
        sender=sender,
    )


async def open_turn(
    *,
    agent: Agent,
    run: Run,
    turn_input: TurnInput,
    stream_tokens: bool = False,
    sender_user: User | None = None,
    api_key: ApiKey | None = None,
    llm: LLMClient | None = None,
    tool_runner: ToolRunner | None = None,
    max_steps: int | None = None,
) -> Turn:
    """Start a turn of ``agent`` for ``run``; raises domain errors before anything is streamed."""
    collab = await sync_to_async(_collaborators)(
        agent,
        run,
        sender_user=sender_user,
        api_key=api_key,
        llm=llm,
        tool_runner=tool_runner,
        max_steps=max_steps,
    )
    return await start_turn(collab, turn_input, stream_tokens=stream_tokens)


def _preview(agent: Agent, turn_input: TurnInput) -> dict[str, Any]:

    rows = [snapshot(m) for m in Message.objects.in_context(agent)]
    request = preview_request(
        rows, turn_input, tool_specs(agent), model_settings(agent), ToolRules.from_json(agent.tool_rules)
    )
    client, _model = get_llm_client(agent.model, organization=agent.organization)
    return client.build_payload(request, stream=False)


async def preview_payload(*, agent: Agent, turn_input: TurnInput) -> dict[str, Any]:
    """The exact JSON body the provider would receive for this input now; nothing is persisted."""
    return await sync_to_async(_preview)(agent, turn_input)


def check_input(*, agent: Agent, turn_input: TurnInput) -> None:
    """Raise the engine's errors now for input the agent's state does not accept (used before queueing a run)."""

    rows = [snapshot(m) for m in Message.objects.in_context(agent)]
    check_turn_input(rows, turn_input)
