"""What the browser chat does: read a page of history, resync a tab, and start or stop runs.

The WebSocket consumer and the chat's JSON view call exactly one of these. Runs
start through ``agents.runs.start.run_start`` like every other transport's, and stop
through ``agents.runs.state``. Rows travel in one shape everywhere
(``agents.wire.messages.chat_row``): ``{"row": {"id", "seq", "role", "kind"}, "messages":
[LettaMessage, ...]}``, the shape of a ``message`` event payload. Pages, syncs and
accepted frames carry the agent's ``pending_approval`` (the approval request waiting for a
person, ``null`` while a run is active: ``agents.selectors.pending_approval_rows``) and each
run as the chat shows it (``agents.wire.chat.chat_run``: ``active``, ``status``, the banner of
its end), so the page never re-derives them.
"""

from __future__ import annotations

import uuid
from importlib import import_module
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db.models import Exists, OuterRef

from accounts.models import Membership
from agents.approvals.answers import approval_answer
from agents.engine.inputs import (
    ApprovalItem,
    MessageCreate,
    TextPart,
    ToolReturnItem,
    TurnRequest,
)
from agents.errors import ApplicationError
from agents.memory.notes import memory_edit_notes
from agents.memory.selectors import agent_blocks
from agents.memory.services import panel_block
from agents.models import Agent, Message, MessageRole, Run, RunStatus, RunTransport, Step
from agents.runs import state as run_state
from agents.runs.preview import context_meter
from agents.runs.start import RunMode, run_start
from agents.runs.sweeper import sweep_stale_runs
from agents.selectors import message_list, pending_approval_row
from agents.sockets import accepted_frame
from agents.wire.chat import ChatRun, chat_row, chat_run
from agents.wire.messages import approval_request, row_kind
from folders.attachments import panel_files

if TYPE_CHECKING:
    from collections.abc import Iterable

    from django.db.models import QuerySet

    from accounts.models import User

HISTORY_PAGE_ROWS = 30
SYNC_PAGE_ROWS = 200


class NothingToRetry(ApplicationError):
    default_detail = "There is no failed run to retry."


class NothingToRegenerate(ApplicationError):
    default_detail = "There is no message of yours to answer again."


class RegenerateAwaitsApproval(ApplicationError):
    status_code = 409
    default_detail = "Answer the approval request first; then the answer can be regenerated."


# --- reads --------------------------------------------------------------------------------


def chat_access_holds(*, user_id: Any, agent: Agent, session_key: str | None) -> bool:
    """Whether the user who opened this chat may still use it: active, still a member of the
    agent's organization, and (for a browser session) not logged out since."""
    if not Membership.objects.filter(
        user_id=user_id, user__is_active=True, organization_id=agent.organization_id
    ).exists():
        return False
    return session_key is None or import_module(settings.SESSION_ENGINE).SessionStore().exists(session_key)


def run_summary(run: Run) -> ChatRun:
    error = run.error.get("message") if isinstance(run.error, dict) else run.error
    return chat_run(
        run_id=run.pk,
        status=run.status,
        stop_reason=run.stop_reason or None,
        error=str(error) if error else None,
        usage={
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
            "total_tokens": run.total_tokens,
            "step_count": run.step_count,
            "estimated": bool(getattr(run, "usage_estimated", False)),
        },
    )


def _with_estimate(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Runs annotated with ``usage_estimated``: did any step's provider give no usage figures?"""
    return runs.annotate(usage_estimated=Exists(Step.objects.filter(run=OuterRef("pk"), usage_estimated=True)))


def _runs_of(rows: Iterable[Message]) -> dict[str, ChatRun]:
    run_ids = {row.run_id for row in rows if row.run_id}
    return {run.public_id: run_summary(run) for run in _with_estimate(Run.objects.filter(pk__in=run_ids))}


def latest_run(agent: Agent) -> Run | None:
    runs = Run.objects.for_org(agent.organization_id).filter(agent=agent)
    return _with_estimate(runs).order_by("-created_at").first()


def chat_history(*, agent: Agent, before: str | None = None, limit: int = HISTORY_PAGE_ROWS) -> dict[str, Any]:
    """A page of rows older than the row ``before`` (a message id), newest page first.

    Also gives the runs those rows belong to (for per-turn usage) and, on the first
    page, the agent's latest run (is one active? did the last one fail?) and its
    memory (``chat_memory``).
    """
    rows = message_list(agent=agent, before=before, limit=limit + 1, order="desc")
    has_more = len(rows) > limit
    rows = rows[1:] if has_more else rows
    page: dict[str, Any] = {
        "rows": _chat_rows(rows),
        "has_more": has_more,
        "runs": _runs_of(rows),
    }
    if before is None:
        run = latest_run(agent)
        page["run"] = run_summary(run) if run else None
        page["pending_approval"] = approval_request(pending_approval_row(agent))
        page.update(chat_memory(agent=agent))
    return page


def _chat_rows(rows: list[Message]) -> list[dict[str, Any]]:
    notes = memory_edit_notes(rows)
    return [chat_row(row, memory_edits=notes.get(row.id, ())) for row in rows]


def chat_memory(*, agent: Agent) -> dict[str, Any]:
    """The memory panel's state: the agent's blocks in prompt order, the files of its folders (open or
    closed, with the range shown: ``folders.attachments.panel_files``), and the context meter.

    A page reads it when it opens; when a run ends, ``agents.broadcast`` computes it once and
    sends it to every tab in the ``run_finished`` payload; a change of the open files between
    (the API's open and close routes) comes as ``files_updated`` (``folders.broadcast``).
    """
    return {
        "memory": [panel_block(block) for block in agent_blocks(agent)],
        "files": panel_files(agent),
        "context": context_meter(agent=agent),
    }


def chat_accepted(*, request: str, agent: Agent, runs: list[Run]) -> dict[str, Any]:
    """The answer to a frame that started or stopped runs: the runs as the chat shows them, and
    the approval request still waiting (``null`` once a run answers it)."""
    return accepted_frame(request, runs) | {
        "runs": {run.public_id: run_summary(run) for run in runs},
        "pending_approval": approval_request(pending_approval_row(agent)),
    }


def chat_sync(*, agent: Agent, after_seq: int, limit: int = SYNC_PAGE_ROWS) -> dict[str, Any]:
    """What a tab missed: the rows after ``after_seq`` and the agent's latest run.

    ``has_more`` means more rows follow; the tab asks again after the last one.
    """
    sweep_stale_runs(agent_id=agent.pk)
    rows = list(
        Message.objects.in_thread(agent.pk)
        .filter(seq__gt=after_seq)
        .exclude(role=MessageRole.SYSTEM)
        .order_by("seq")[: limit + 1]
    )
    has_more = len(rows) > limit
    rows = rows[:limit]
    run = latest_run(agent)
    return {
        "type": "sync",
        "rows": _chat_rows(rows),
        "has_more": has_more,
        "runs": _runs_of(rows),
        "run": run_summary(run) if run else None,
        "pending_approval": approval_request(pending_approval_row(agent)),
    }


# --- writes -------------------------------------------------------------------------------


def _start(*, agent: Agent, user: User, request: TurnRequest) -> Run:
    return run_start(agent=agent, request=request, mode=RunMode.BACKGROUND, user=user, transport=RunTransport.CHAT)


def chat_send(*, agent: Agent, user: User, text: str, otid: str) -> Run:
    return _start(agent=agent, user=user, request=TurnRequest(messages=[MessageCreate(content=text, otid=otid)]))


def chat_approve(*, agent: Agent, user: User, approvals: list[ApprovalItem | ToolReturnItem]) -> Run:
    """Answer the pending batch in one submission (Letta's ``ApprovalCreate`` items)."""
    return approval_answer(agent=agent, user=user, approvals=approvals, transport=RunTransport.CHAT)


def chat_continue(*, agent: Agent, user: User) -> Run:
    """Step again with no new input (after ``max_steps``)."""
    return _start(agent=agent, user=user, request=TurnRequest(messages=[]))


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
    original = {key: value for key, value in failed.request.items() if key in ("messages", "input")}
    return _start(agent=agent, user=user, request=TurnRequest.parse(original))


def last_user_input(agent: Agent) -> Message | None:
    """The agent's latest message from a person (not the login notice, not a compaction's summary)."""
    rows = Message.objects.in_thread(agent.pk).filter(role=MessageRole.USER).order_by("-seq")
    return next((row for row in rows.iterator(chunk_size=20) if row_kind(row) == "message"), None)


def chat_regenerate(*, agent: Agent, user: User) -> Run:
    """Answer the last input again: a new turn with the same content through ``run_start``.

    The earlier answer stays in the history (the input is stored again, as a new turn).
    Refused while an approval waits for a person; a run still active is refused by the
    busy rule, like any other start.
    """
    if pending_approval_row(agent) is not None:
        raise RegenerateAwaitsApproval()
    source = last_user_input(agent)
    texts = [part.get("text", "") for part in source.content or [] if part.get("type") == "text"] if source else []
    if not any(text.strip() for text in texts):
        raise NothingToRegenerate()
    content: str | list[TextPart] = texts[0] if len(texts) == 1 else [TextPart(text=text) for text in texts]
    message = MessageCreate(content=content, otid=str(uuid.uuid4()))
    return _start(agent=agent, user=user, request=TurnRequest(messages=[message]))


def chat_cancel(*, agent: Agent) -> list[Run]:
    """Stop the agent's active runs; every tab hears of each end (``agents.runs.state``)."""
    return run_state.cancel_agent_runs(agent=agent)
