"""Wire the engine to one agent's rows: collaborators from the database, and the one way to run a turn.

``agents.runs.execute`` calls ``open_turn`` for every run, whatever its transport.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from asgiref.sync import sync_to_async
from django.conf import settings

from agents.engine.approvals import DecisionAuthor
from agents.engine.collaborators import TurnCollaborators
from agents.engine.context import ModelSettings
from agents.engine.inputs import ClientSkill, ClientTool, TurnInput
from agents.engine.loop import Turn, start_turn
from agents.engine.rules import ToolRules
from agents.engine.state import preview_request
from agents.llm.registry import get_llm_client, reusable_llm_client, takes_images
from agents.memory.prompt import MemorySection, Skill, memory_and_scope, memory_source
from agents.models import Conversation, Message, RunTransport
from agents.runs.setup_cache import Setup, setup_key, setups
from agents.runs.store import DjangoConversationStore
from agents.services import agent_set_tool_approval
from tools.base import ToolContext, ToolSpec
from tools.runtime import DefaultToolRunner, tool_spec_for

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from accounts.models import ApiKey, User
    from agents.engine.inputs import TurnRequest
    from agents.engine.types import Transport
    from agents.llm.base import LLMClient
    from agents.models import Agent, Run
    from tools.base import ToolRunner


def thread_model(agent: Agent, conversation: Conversation | None = None) -> tuple[str, dict[str, Any]]:
    """The model handle a turn of this thread calls, and the settings stored with it: a conversation's
    own ``model`` with its ``model_settings``, else the agent's (as Letta: a conversation's
    ``model_settings`` without a ``model`` change nothing; the context window stays the agent's)."""
    if conversation is not None and conversation.model:
        return conversation.model, dict(conversation.model_settings or {})
    return agent.model, {}


def model_settings(
    agent: Agent, client_skills: Sequence[ClientSkill] = (), conversation: Conversation | None = None
) -> ModelSettings:
    """The model settings of a turn of ``agent`` (on ``conversation``'s thread, with its own model if it
    has one); ``client_skills`` join its system prompt for this request only."""
    handle, chosen = thread_model(agent, conversation)
    provider, _, model = handle.partition("/")
    skills = [Skill(name=s.name, description=s.description, location=s.location) for s in client_skills]

    def setting(name: str, default: Any) -> Any:
        value = chosen.get(name)
        return default if value is None else value

    return ModelSettings(
        handle=handle,
        model=model or provider,
        temperature=setting("temperature", agent.temperature),
        max_tokens=setting("max_output_tokens", agent.max_tokens),
        parallel_tool_calls=setting("parallel_tool_calls", agent.parallel_tool_calls),
        reasoning=agent.enable_reasoner,
        reasoning_budget_tokens=agent.max_reasoning_tokens,
        reasoning_effort=agent.reasoning_effort or None,
        context_window=agent.context_window,
        max_steps=agent.max_steps,
        memory=memory_source(agent, skills, conversation.pk if conversation is not None else None),
        compaction_threshold=settings.CONTEXT_COMPACTION_THRESHOLD,
        compaction_evict_share=compaction_evict_share(agent),
        image_input=takes_images(handle, organization=agent.organization),
    )


def compaction_evict_share(agent: Agent) -> float:
    """How much of the conversation a compaction evicts: all of it in the ``all`` modes of the agent's
    ``compaction_settings``, else their ``sliding_window_percentage`` (the server's default share when unset)."""
    chosen = agent.compaction_settings or {}
    if chosen.get("mode") in ("all", "self_compact_all"):
        return 1.0
    share = chosen.get("sliding_window_percentage")
    return float(share) if share is not None else float(settings.CONTEXT_COMPACTION_EVICT_SHARE)


def tool_specs(agent: Agent) -> list[ToolSpec]:
    return [tool_spec_for(at) for at in agent.agent_tools.select_related("tool").order_by("created_at", "id")]


def client_tool_spec(tool: ClientTool) -> ToolSpec:
    """A tool declared on the request: the model may call it, and the call waits for the caller's result."""
    schema = {"name": tool.name, "description": tool.description or "", "parameters": tool.parameters or {}}
    return ToolSpec(name=tool.name, kind="client", json_schema=schema)


def with_client_tools(specs: list[ToolSpec], client_tools: Sequence[ClientTool]) -> list[ToolSpec]:
    """The agent's tools plus the request's client tools; a client tool replaces an attached one of its name."""
    declared = {tool.name: client_tool_spec(tool) for tool in client_tools}
    return [spec for spec in specs if spec.name not in declared] + list(declared.values())


def default_llm_client(agent: Agent, conversation: Conversation | None = None) -> LLMClient:
    """The provider client of a turn on this thread (``thread_model``), with bounded retries of transient errors."""
    client, _model = get_llm_client(thread_model(agent, conversation)[0], organization=agent.organization)
    return client


def default_tool_runner() -> ToolRunner:
    return DefaultToolRunner()


@dataclass(frozen=True)
class TurnSetup:
    """What a turn of ``run`` needs besides the database: its input, and the request's options.

    The agent is the run's, and so is the sender (``run.created_by``, ``run.api_key``). ``llm``
    and ``tool_runner`` replace the agent's provider client and the default tool runner (tests).
    """

    run: Run
    turn_input: TurnInput
    stream_tokens: bool = False
    max_steps: int | None = None
    client_tools: Sequence[ClientTool] = ()
    client_skills: Sequence[ClientSkill] = ()
    llm: LLMClient | None = None
    tool_runner: ToolRunner | None = None


@dataclass(frozen=True)
class Prefetched:
    """What a turn reads besides its window, read ahead in the start's transaction (``prefetch``)."""

    tools: list[ToolSpec]
    llm: LLMClient | Exception  # the agent's provider client, or why it has none
    memory: str  # the memory section of the turn's first step, without the request's skills


def prefetch(run: Run) -> Prefetched:
    """Read the provider, the tools and the first step's memory of ``run``'s turn now: called by the start
    under the thread's row lock, so these reads join its transaction instead of each being one. What this
    process kept under the agent's ``setup_revision`` is not read again (``agents.runs.setup_cache``)."""
    agent = run.agent
    key = setup_key(agent) if run.conversation_id is None else None
    kept = setups.get(agent.id, key) if key is not None else None
    if kept is not None:
        llm = kept.llm if kept.llm is not None else _llm_or_error(agent, run.conversation)[0]
        memory = kept.memory if kept.memory is not None else memory_source(agent).compile_sync()
        return Prefetched(tools=list(kept.tools), llm=llm, memory=memory)
    llm, reusable = _llm_or_error(agent, run.conversation)
    memory, own_rows_only = memory_and_scope(
        organization_id=agent.organization_id, agent_id=agent.id, conversation_id=run.conversation_id
    )
    tools = tool_specs(agent)
    if key is not None:
        kept_llm = llm if reusable and not isinstance(llm, Exception) else None
        setups.put(agent.id, key, Setup(tools=tuple(tools), llm=kept_llm, memory=memory if own_rows_only else None))
    return Prefetched(tools=tools, llm=llm, memory=memory)


def _llm_or_error(agent: Agent, conversation: Conversation | None) -> tuple[LLMClient | Exception, bool]:
    """The thread's provider client (or why it has none, raised when the turn opens, where it was raised
    before), and whether a later turn may use it again."""
    try:
        return reusable_llm_client(thread_model(agent, conversation)[0], organization=agent.organization)
    except Exception as exc:
        return exc, False


@dataclass
class _FirstCompiled:
    """A memory source whose first compile was read ahead (``Prefetched.memory``); later steps read it again."""

    source: MemorySection
    first: str | None

    async def compile(self) -> str:
        if self.first is None:
            return await self.source.compile()
        return self._take()

    def compile_sync(self) -> str:
        return self._take() if self.first is not None else self.source.compile_sync()

    def _take(self) -> str:
        memory, self.first = self.first or "", None
        skills = self.source.skills
        return f"{memory.rstrip(chr(10))}\n\n{skills}" if skills else memory


def _collaborators(setup: TurnSetup) -> TurnCollaborators:
    run = setup.run
    agent, sender_user, api_key = run.agent, run.created_by, run.api_key
    ahead = run.prefetched if isinstance(run.prefetched, Prefetched) else None
    run.prefetched = None
    settings = model_settings(agent, setup.client_skills, run.conversation)
    if ahead is not None and isinstance(settings.memory, MemorySection):
        settings = ModelSettings(**{**settings.__dict__, "memory": _FirstCompiled(settings.memory, ahead.memory)})
    llm = setup.llm
    if llm is None and ahead is not None:
        if isinstance(ahead.llm, Exception):
            raise ahead.llm
        llm = ahead.llm
    if setup.max_steps:
        settings = ModelSettings(**{**settings.__dict__, "max_steps": setup.max_steps})
    sender: dict[str, Any] = {}
    if sender_user is not None and sender_user.is_authenticated:
        sender["user"] = sender_user.email
    if api_key is not None:
        sender["api_key"] = api_key.prefix
    store = DjangoConversationStore(
        agent=agent,
        run=run,
        sender_user_id=getattr(sender_user, "pk", None),
        sender_api_key_id=getattr(api_key, "pk", None),
    )
    collab = TurnCollaborators(
        store=store,
        llm=llm or default_llm_client(agent, run.conversation),
        tool_runner=setup.tool_runner or default_tool_runner(),
        tools=with_client_tools(ahead.tools if ahead is not None else tool_specs(agent), setup.client_tools),
        settings=settings,
        rules=ToolRules.from_json(agent.tool_rules),
        tool_context=ToolContext(
            organization_id=agent.organization_id,
            agent_id=agent.id,
            run_id=run.id,
            env_vars={str(k): str(v) for k, v in (agent.tool_env_vars or {}).items()},
            conversation_id=run.conversation_id,
        ),
        sender=sender,
        author=decision_author(run, sender_user=sender_user, api_key=api_key),
        allow_always=_allow_always(agent),
    )
    store.prepare()  # opened in this thread hop too: ``start_turn`` needs no hop of its own for it
    return collab


EXPIRY_AUTHOR = "Approval expiry"


def decision_author(run: Run, *, sender_user: User | None, api_key: ApiKey | None) -> DecisionAuthor:
    """Who answers approvals in ``run``, for the audit: the expiry timer, an API key, or a person."""
    transport = cast("Transport", run.transport)
    if run.transport == RunTransport.EXPIRY:
        return DecisionAuthor(decided_by=EXPIRY_AUTHOR, transport=transport)
    if api_key is not None:
        return DecisionAuthor(decided_by=f"API key {api_key.name}", transport=transport, api_key_id=api_key.pk)
    if sender_user is not None and sender_user.is_authenticated:
        return DecisionAuthor(decided_by=sender_user.email, transport=transport, user_id=sender_user.pk)
    return DecisionAuthor(decided_by="Unknown", transport=transport)


def _allow_always(agent: Agent) -> Callable[[str], Awaitable[None]]:
    """An approval's ``always_allow``: the same writer as Letta's approval endpoint (``requires_approval=false``)."""

    async def allow(tool_name: str) -> None:
        await sync_to_async(agent_set_tool_approval)(agent=agent, tool_name=tool_name, requires_approval=False)

    return allow


def turn_setup(
    run: Run,
    request: TurnRequest,
    *,
    stream_tokens: bool = False,
    llm: LLMClient | None = None,
    tool_runner: ToolRunner | None = None,
) -> TurnSetup:
    """The setup of a turn of ``run`` for ``request`` (its input and options)."""
    return TurnSetup(
        run=run,
        turn_input=request.turn_input(),
        stream_tokens=stream_tokens,
        max_steps=request.max_steps,
        client_tools=request.client_tools or (),
        client_skills=request.client_skills or (),
        llm=llm,
        tool_runner=tool_runner,
    )


@dataclass(frozen=True)
class _Prepared:
    """A turn's collaborators built ahead (``prepare_turn``), or why they could not be."""

    collaborators: TurnCollaborators | None
    error: Exception | None = None


def prepare_turn(run: Run, request: TurnRequest) -> None:
    """Build the turn's collaborators now, in the thread of the request that started ``run`` (they read
    nothing more: the start read ahead, the window comes from the cache), so opening the turn costs no
    thread hop; a failure is raised when the turn opens, as it would have been there."""
    try:
        run.prefetched = _Prepared(_collaborators(turn_setup(run, request)))
    except Exception as exc:
        run.prefetched = _Prepared(None, exc)


async def open_turn(setup: TurnSetup) -> Turn:
    """Start a turn of ``setup.run``'s agent; raises domain errors before anything is streamed."""
    prepared = setup.run.prefetched
    if isinstance(prepared, _Prepared) and setup.llm is None and setup.tool_runner is None:
        setup.run.prefetched = None
        if prepared.error is not None:
            raise prepared.error
        assert prepared.collaborators is not None
        collab = prepared.collaborators
    else:
        if isinstance(prepared, _Prepared):
            setup.run.prefetched = None  # built for the agent's own provider and tools: not this setup's
        collab = await sync_to_async(_collaborators)(setup)
    return await start_turn(collab, setup.turn_input, stream_tokens=setup.stream_tokens)


def _preview(agent: Agent, turn_input: TurnInput, conversation: Conversation | None) -> dict[str, Any]:
    rows = [m.snapshot() for m in Message.objects.in_context(agent, conversation)]
    chosen = model_settings(agent, conversation=conversation)
    request = preview_request(rows, turn_input, tool_specs(agent), chosen, ToolRules.from_json(agent.tool_rules))
    return default_llm_client(agent, conversation).build_payload(request, stream=False)


async def preview_payload(
    *, agent: Agent, turn_input: TurnInput, conversation: Conversation | None = None
) -> dict[str, Any]:
    """The exact JSON body the provider would receive for this input now (on the agent's default
    thread, or ``conversation``); nothing is persisted."""
    return await sync_to_async(_preview)(agent, turn_input, conversation)
