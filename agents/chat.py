"""What the browser chat does: read a page of history, resync a tab, and start or stop runs.

The WebSocket consumer and the chat's JSON view call exactly one of these. Runs are
created with ``agents.runs.run_create`` and handed to their executor with
``run_dispatch``; the loop's rules stay in the engine (``check_input`` raises its
errors before a run is queued, so the tab gets them at once). Rows travel in one
shape everywhere: ``{"row": {"id", "seq", "role"}, "messages": [LettaMessage, ...]}``,
the shape of a ``message`` event payload.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any, TypedDict

from asgiref.sync import async_to_sync
from django.db import transaction
from django.db.models import Exists, OuterRef

from accounts.access import membership_for
from agents.broadcast import event_payload, publish
from agents.engine.events import RunFinishedEvent, TurnUsage
from agents.errors import AgentBusy, ApplicationError
from agents.models import Agent, Message, MessageRole, Run, RunStatus, Step
from agents.runs import agent_cancel_runs, parse_turn_input, run_create, run_dispatch
from agents.selectors import message_list
from agents.sweeper import sweep_stale_runs
from agents.turns import check_input
from agents.wire import letta_messages_for_row, public_id

if TYPE_CHECKING:
    from collections.abc import Iterable

    from django.db.models import QuerySet

    from accounts.models import User

HISTORY_PAGE_ROWS = 30
SYNC_PAGE_ROWS = 200
MAX_MESSAGE_CHARS = 100_000


class ChatRow(TypedDict):
    row: dict[str, Any]
    messages: list[dict[str, Any]]


class RunState(TypedDict):
    id: str
    status: str
    stop_reason: str | None
    error: str | None
    usage: dict[str, Any]
    active: bool


class NothingToRetry(ApplicationError):
    default_detail = "There is no failed run to retry."


# --- reads --------------------------------------------------------------------------------


def chat_agent(*, user: User, organization_id: Any, agent_id: str) -> Agent | None:
    """The agent ``agent_id`` if it belongs to the organization the user acts for, else ``None``.

    ``organization_id`` is the session's choice; like every page, a user without a
    membership there acts for their oldest organization.
    """
    membership = membership_for(user, organization_id)
    pk = Agent.parse_public_id(agent_id)
    if membership is None or pk is None:
        return None
    return Agent.objects.for_org(membership.organization).filter(pk=pk).first()


def chat_row(message: Message) -> ChatRow:
    return {
        "row": {"id": message.public_id, "seq": message.seq, "role": message.role},
        "messages": letta_messages_for_row(message),
    }


def run_state(run: Run) -> RunState:
    error = run.error.get("message") if isinstance(run.error, dict) else run.error
    return {
        "id": run.public_id,
        "status": run.status,
        "stop_reason": run.stop_reason or None,
        "error": str(error) if error else None,
        "usage": {
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
            "total_tokens": run.total_tokens,
            "step_count": run.step_count,
            "estimated": bool(getattr(run, "usage_estimated", False)),
        },
        "active": run.status in (RunStatus.QUEUED, RunStatus.RUNNING),
    }


def _with_estimate(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Runs annotated with ``usage_estimated``: did any step's provider give no usage figures?"""
    return runs.annotate(usage_estimated=Exists(Step.objects.filter(run=OuterRef("pk"), usage_estimated=True)))


def _runs_of(rows: Iterable[Message]) -> dict[str, RunState]:
    run_ids = {row.run_id for row in rows if row.run_id}
    return {run.public_id: run_state(run) for run in _with_estimate(Run.objects.filter(pk__in=run_ids))}


def latest_run(agent: Agent) -> Run | None:
    runs = Run.objects.for_org(agent.organization_id).filter(agent=agent)
    return _with_estimate(runs).order_by("-created_at").first()


def chat_history(*, agent: Agent, before: str | None = None, limit: int = HISTORY_PAGE_ROWS) -> dict[str, Any]:
    """A page of rows older than the row ``before`` (a message id), newest page first.

    Also gives the runs those rows belong to (for per-turn usage) and, on the first
    page, the agent's latest run (is one active? did the last one fail?).
    """
    rows = message_list(agent=agent, before=before, limit=limit + 1, order="desc")
    has_more = len(rows) > limit
    rows = rows[1:] if has_more else rows
    page: dict[str, Any] = {
        "rows": [chat_row(row) for row in rows],
        "has_more": has_more,
        "runs": _runs_of(rows),
    }
    if before is None:
        run = latest_run(agent)
        page["run"] = run_state(run) if run else None
    return page


def chat_sync(*, agent: Agent, after_seq: int, limit: int = SYNC_PAGE_ROWS) -> dict[str, Any]:
    """What a tab missed: the rows after ``after_seq`` and the agent's latest run.

    ``has_more`` means more rows follow; the tab asks again after the last one.
    """
    sweep_stale_runs()
    rows = list(
        Message.objects.filter(agent=agent, seq__gt=after_seq)
        .exclude(role=MessageRole.SYSTEM)
        .order_by("seq")[: limit + 1]
    )
    has_more = len(rows) > limit
    rows = rows[:limit]
    run = latest_run(agent)
    return {
        "type": "sync",
        "rows": [chat_row(row) for row in rows],
        "has_more": has_more,
        "runs": _runs_of(rows),
        "run": run_state(run) if run else None,
    }


# --- writes -------------------------------------------------------------------------------


def _start_run(*, agent: Agent, user: User, request: dict[str, Any]) -> Run:
    """Queue a background run of ``request`` after the engine accepted its input for the current state.

    Raises ``AgentBusy`` while another run of the agent is queued or running (a worker
    that died is swept first), and the engine's errors (``PendingApprovalConflict``,
    ``NoPendingApproval``, ``InvalidToolCallIds``...) for input the state refuses.
    """
    sweep_stale_runs()
    if Run.objects.filter(agent=agent).active().exists():
        raise AgentBusy()
    check_input(agent=agent, turn_input=parse_turn_input(request))
    with transaction.atomic():
        run = run_create(agent=agent, request={**request, "stream_tokens": True}, background=True, created_by=user)
    # Dispatched from an empty context: called from a thread-sensitive ``sync_to_async`` (the
    # consumer), an in-process run would inherit asgiref's "single thread executor in use" guard
    # and fail its first database call with "would deadlock".
    contextvars.Context().run(run_dispatch, run=run)
    return run


def chat_send(*, agent: Agent, user: User, text: str, otid: str) -> Run:
    return _start_run(agent=agent, user=user, request={"messages": [{"role": "user", "content": text, "otid": otid}]})


def chat_approve(*, agent: Agent, user: User, approvals: list[dict[str, Any]]) -> Run:
    """Answer the pending batch in one submission (Letta's ``ApprovalCreate`` items)."""
    return _start_run(agent=agent, user=user, request={"messages": [{"type": "approval", "approvals": approvals}]})


def chat_continue(*, agent: Agent, user: User) -> Run:
    """Step again with no new input (after ``max_steps``)."""
    return _start_run(agent=agent, user=user, request={"messages": []})


def chat_retry(*, agent: Agent, user: User) -> Run:
    """Run the agent's failed last run again without duplicating anything.

    A run that persisted rows (its input at least) continues from them, so its
    input is not stored twice and tool results already computed are kept; a run
    that failed before persisting anything is sent again as it was.
    """
    failed = latest_run(agent)
    if failed is None or failed.status != RunStatus.FAILED:
        raise NothingToRetry()
    if failed.messages.exists():
        return chat_continue(agent=agent, user=user)
    request = {key: value for key, value in failed.request.items() if key in ("messages", "input")}
    return _start_run(agent=agent, user=user, request=request)


def chat_cancel(*, agent: Agent) -> list[Run]:
    """Stop the agent's active runs. One that had not started ends now, and its tabs are told."""
    runs = agent_cancel_runs(agent=agent)
    never_started = [run for run in runs if run.status == RunStatus.CANCELLED and run.started_at is None]
    if never_started:
        payloads = [
            event_payload(RunFinishedEvent(run_id=run.id, seq=1, stop_reason="cancelled", usage=TurnUsage()))
            for run in never_started
        ]
        async_to_sync(publish)(agent.id, payloads)
    return runs


def public_run_ids(runs: Iterable[Run]) -> list[str]:
    return [public_id("run", run.id) or "" for run in runs]
