"""Starting a run: the one service every transport calls (the chat, and the blocking,
streamed and async REST views).

``run_start`` sweeps the agent's dead runs, applies the busy rule, checks the input
against the conversation's state, and creates the run in one transaction; then it
either returns the run for the caller to execute inline (``agents.runs.execute``: created
running, with its thread's turn lease taken in the same transaction) or hands it to a worker
once the transaction commits (``agents.runs.dispatch``).
"""

from __future__ import annotations

import enum
import functools
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from agents.conversations.models import AgentHold
from agents.engine.state import check_turn_input
from agents.errors import AgentBusy, NotFound
from agents.models import Agent, Conversation, Message, Run, RunStatus, RunTransport, SeqRange
from agents.runs import dispatch, writes
from agents.runs import state as run_state
from agents.runs.sweeper import sweep_stale_runs
from agents.runs.turns import prefetch, prepare_turn, tool_specs, with_client_tools

if TYPE_CHECKING:
    from accounts.models import ApiKey, Organization, User
    from agents.engine.inputs import TurnRequest


@dataclass(frozen=True)
class AgentRef:
    """An agent named by the request and not read yet: the start's row-lock query reads it (a 404 if
    ``organization`` has no such agent), so a blocking turn costs no lookup of its own."""

    organization: Organization | None
    public_id: str


class RunMode(enum.Enum):
    INLINE = "inline"  # the request executes the turn itself (blocking and streamed REST calls)
    BACKGROUND = "background"  # a worker executes it (the chat, ``messages/async``, ``background=true``)


def check_input(*, agent: Agent, request: TurnRequest, conversation: Conversation | None = None) -> None:
    """Raise the engine's errors now for input the thread's state does not accept (edited
    approval arguments included, against the schemas of the agent's and the request's tools)."""
    rows = [m.snapshot() for m in Message.objects.in_context(agent, conversation)]
    specs = with_client_tools(tool_specs(agent), request.client_tools or ())
    check_turn_input(rows, request.turn_input(), specs={spec.name: spec for spec in specs})


def run_start(
    *,
    agent: Agent | AgentRef,
    request: TurnRequest,
    mode: RunMode,
    user: User | None = None,
    api_key: ApiKey | None = None,
    transport: RunTransport = RunTransport.API,
    conversation: Conversation | None = None,
) -> Run:
    """Create a run of ``request`` on a thread of ``agent`` (its default one, or ``conversation``),
    or raise why it cannot start.

    The busy rule (DESIGN §14, ``RunQuerySet.busy_with``): while the thread has a queued or
    running run, a new run on it is refused with ``AgentBusy`` (409) on every transport; a turn that stopped
    for approval has ended its run, so the answer starts the next run normally. Two threads of one
    agent run at once.
    Background runs have their input checked now, so the caller hears of a refused
    input (``PendingApprovalConflict``, ``NoPendingApproval``…) at once rather than
    from a failed run; inline runs check it when their turn opens, before anything
    is streamed.
    """
    if isinstance(agent, AgentRef) and (mode is RunMode.BACKGROUND or conversation is not None):
        agent = _lookup(agent)
    if mode is RunMode.BACKGROUND:
        assert isinstance(agent, Agent)
        check_input(agent=agent, request=request, conversation=conversation)
    run, agent = _create_unless_busy(agent, conversation, request, mode, user, api_key, transport)
    # Busy: perhaps only with a run whose executor died. The sweep ends such runs, and costs
    # its query only here, not on every start.
    if run is None and sweep_stale_runs(agent_id=agent.pk):
        run, agent = _create_unless_busy(agent, conversation, request, mode, user, api_key, transport)
    if run is None:
        raise AgentBusy()
    if mode is RunMode.INLINE:
        prepare_turn(run, request)  # in this thread too: opening the turn costs no hop of its own
    return run


def _lookup(ref: AgentRef) -> Agent:
    agent: Agent = Agent.objects.for_org(ref.organization).get_public(ref.public_id, missing="Agent not found")
    if ref.organization is not None:
        agent.organization = ref.organization  # the caller's, already loaded
    return agent


def _hold_by_ref(ref: AgentRef) -> tuple[Agent, AgentHold]:
    """``Agent.objects.hold`` of the agent's default thread and the agent's row, in one query."""
    pk = Agent.parse_public_id(ref.public_id)
    if ref.organization is None or pk is None:
        raise NotFound("Agent not found")
    sql, params, slots = _hold_sql()
    values = {"organization": _db_id(ref.organization.pk), "agent": _db_id(pk)}
    found: list[Any] = list(Agent.objects.raw(sql, [values.get(slots.get(i, ""), p) for i, p in enumerate(params)]))
    if not found:
        raise NotFound("Agent not found")
    agent = found[0]
    agent.organization = ref.organization
    hold = AgentHold(
        busy=bool(agent.busy),
        seqs=SeqRange(agent.last_seq),
        context_start_seq=agent.context_start_seq,
        context_summary_seq=agent.context_summary_seq,
        context_keep_seq=agent.context_keep_seq,
        context_revision=agent.context_revision,
    )
    return agent, hold


def _db_id(value: uuid.UUID) -> Any:
    """An id as the query's parameters hold it (a UUID on Postgres, its hex on SQLite)."""
    return Agent._meta.pk.get_db_prep_value(value, connection)


@functools.cache
def _hold_sql() -> tuple[str, tuple[Any, ...], dict[int, str]]:
    """The SQL of the start's row-lock query, compiled by the ORM once per process (compiling it on
    every start cost more CPU than sending it; issue 24): its text, its parameters as compiled for
    stand-in ids, and which of them are the organization's and the agent's ids."""
    stand_ins = {"organization": uuid.uuid4(), "agent": uuid.uuid4()}
    last_row = Message.objects.filter(agent_id=OuterRef("pk"), conversation__isnull=True).order_by("-seq").values("seq")
    query = (
        Agent.objects.for_org(stand_ins["organization"])
        .filter(pk=stand_ins["agent"])
        .select_for_update(of=("self",))
        .annotate(busy=Exists(Run.objects.busy_with(OuterRef("pk"))), last_seq=Subquery(last_row[:1]))
        .query
    )
    sql, params = query.sql_with_params()
    slots = {
        index: name for index, param in enumerate(params) for name, id_ in stand_ins.items() if param == _db_id(id_)
    }
    assert sorted(slots.values()) == ["agent", "organization"], "each id is one parameter of the query"
    return sql, tuple(params), slots


def _create_unless_busy(
    agent: Agent | AgentRef,
    conversation: Conversation | None,
    request: TurnRequest,
    mode: RunMode,
    user: User | None,
    api_key: ApiKey | None,
    transport: RunTransport,
) -> tuple[Run | None, Agent]:
    inline = mode is RunMode.INLINE
    with transaction.atomic():
        # Serialize starts per thread: the row lock makes "not busy, then create a run" atomic.
        if isinstance(agent, AgentRef):
            agent, hold = _hold_by_ref(agent)
        else:
            hold = Agent.objects.hold(agent.pk, conversation.pk if conversation else None)
        if hold.busy:
            return None, agent
        now = timezone.now()
        if conversation is not None:
            conversation.last_message_at = now
            conversation.save(update_fields=["last_message_at", "updated_at"])
        run = Run(
            organization_id=agent.organization_id,
            agent=agent,
            conversation=conversation,
            request=request.stored(),
            background=not inline,
            created_by=user if user is not None and user.is_authenticated else None,
            api_key=api_key,
            transport=transport,
            # An inline run is executed by this request: it starts running, holding its thread's lease,
            # in the transaction that creates it (no claim, no lease of its own when its turn opens).
            **({"status": RunStatus.RUNNING, "started_at": now, "heartbeat_at": now} if inline else {}),
        )
        if inline:
            # The run's row and its lease in one statement.
            _, (_, taken) = writes.write_together(
                [writes.insert([run]), run_state.take_lease_write(agent.pk, run.pk, run.conversation_id)]
            )
            if not taken:
                # Not busy, yet the lease is held: only by a run that ended without releasing it, and a
                # lease outlives no run by more than its time to live. Wait for it as for a busy thread.
                transaction.set_rollback(True)
                return None, agent
            run.opened_from = hold
            # The turn's provider, tools and first memory section, read under the same lock (no
            # transaction of their own); what fails is raised when the turn opens, as before.
            run.prefetched = prefetch(run)
        else:
            run.save(force_insert=True)
            dispatch.dispatch_on_commit(run)
    return run, agent
