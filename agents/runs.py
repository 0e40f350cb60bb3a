"""Runs: parse a Letta message request, create the ``Run``, execute it, cancel it.

The blocking call and the SSE stream execute a turn inside the request; async
requests (and the browser chat) dispatch the run to a Celery worker, or to this
process in the embedded default. Both paths call ``execute_run``.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.broadcast import EventPublisher
from agents.engine.events import RunFinishedEvent
from agents.engine.inputs import ApprovalInput, ContinueInput, TurnInput, UserInput
from agents.errors import ApplicationError, ValidationFailed
from agents.models import Agent, Run, RunStatus
from agents.turns import open_turn

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Coroutine

    from accounts.models import ApiKey, User
    from agents.engine.events import EngineEvent

logger = logging.getLogger(__name__)

# Tasks are only weakly held by their loop: these sets keep running work alive until it ends.
_background_tasks: set[asyncio.Task[None]] = set()


def _field_error(loc: list[Any], message: str) -> ValidationFailed:
    return ValidationFailed([{"loc": ["body", *loc], "msg": message, "type": "value_error"}])


def _content_text(content: Any, loc: list[Any]) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for index, part in enumerate(content):
            if (
                not isinstance(part, dict)
                or part.get("type", "text") != "text"
                or not isinstance(part.get("text"), str)
            ):
                raise _field_error([*loc, index], "Only text content parts are supported.")
            texts.append(part["text"])
        return "\n".join(texts)
    raise _field_error(loc, "content must be a string or a list of text parts.")


def parse_turn_input(data: Any) -> TurnInput:
    """A ``LettaRequest`` body as engine input: user messages, or one approval answer.

    An empty ``messages`` list means "continue" (step again with no new input).
    """
    if not isinstance(data, dict):
        raise _field_error([], "The request body must be a JSON object.")
    messages = data.get("messages")
    if messages is None and isinstance(data.get("input"), str):
        messages = [{"role": "user", "content": data["input"]}]
    if messages is None:
        raise _field_error(["messages"], "Field required")
    if not isinstance(messages, list):
        raise _field_error(["messages"], "messages must be a list.")
    if not messages:
        return ContinueInput()
    approvals = [m for m in messages if isinstance(m, dict) and _is_approval(m)]
    if approvals:
        if len(messages) != 1:
            raise _field_error(["messages"], "An approval must be sent alone, as the only message.")
        item = approvals[0]
        if item.get("approvals") is not None and not isinstance(item.get("approvals"), list):
            raise _field_error(["messages", 0, "approvals"], "approvals must be a list.")
        return ApprovalInput(
            approvals=item.get("approvals"),
            approve=item.get("approve"),
            approval_request_id=item.get("approval_request_id"),
            reason=item.get("reason"),
        )
    inputs = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _field_error(["messages", index], "Each message must be an object.")
        role = message.get("role", "user")
        if role not in ("user", "system"):
            raise _field_error(["messages", index, "role"], "role must be 'user' or 'system'.")
        if "content" not in message:
            raise _field_error(["messages", index, "content"], "Field required")
        otid = message.get("otid") or ""
        if not isinstance(otid, str) or len(otid) > 64:
            raise _field_error(["messages", index, "otid"], "otid must be a string of at most 64 characters.")
        inputs.append(UserInput(text=_content_text(message["content"], ["messages", index, "content"]), otid=otid))
    return inputs


def _is_approval(message: dict[str, Any]) -> bool:
    return message.get("type") == "approval" or "approvals" in message or "approve" in message


def parse_max_steps(data: Any) -> int | None:
    value = data.get("max_steps") if isinstance(data, dict) else None
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1000:
        raise _field_error(["max_steps"], "max_steps must be an integer between 1 and 1000.")
    return value


def parse_flag(data: Any, name: str) -> bool:
    """An optional boolean of the request body; anything but true, false or null is a 422 naming it."""
    value = data.get(name) if isinstance(data, dict) else None
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _field_error([name], f"{name} must be true or false.")
    return value


def run_create(
    *,
    agent: Agent,
    request: dict[str, Any],
    background: bool = False,
    created_by: User | None = None,
    api_key: ApiKey | None = None,
) -> Run:
    return Run.objects.create(
        organization_id=agent.organization_id,
        agent=agent,
        request=request,
        background=background,
        created_by=created_by if created_by is not None and created_by.is_authenticated else None,
        api_key=api_key,
    )


def run_cancel(*, run: Run) -> Run:
    """Ask a run to stop; a run that has not started is cancelled at once."""
    now = timezone.now()
    Run.objects.filter(pk=run.pk, cancel_requested_at__isnull=True).update(cancel_requested_at=now)
    Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
        status=RunStatus.CANCELLED, stop_reason="cancelled", completed_at=now
    )
    run.refresh_from_db()
    return run


def agent_cancel_runs(*, agent: Agent, run_ids: list[str] | None = None) -> list[Run]:
    runs = Run.objects.for_org(agent.organization_id).filter(agent=agent).active()
    if run_ids:
        runs = runs.filter(pk__in=[pk for pk in (Run.parse_public_id(r) for r in run_ids) if pk])
    return [run_cancel(run=run) for run in runs]


def run_dispatch(*, run: Run) -> None:
    """Hand a background run to its executor once the transaction that created it commits."""
    transaction.on_commit(lambda: _dispatch(run.pk))


def _dispatch(run_pk: Any) -> None:
    if settings.RUN_EXECUTOR == "celery":
        from agents.tasks import execute_run_task

        execute_run_task.delay(str(run_pk))
        return
    run_in_process(execute_run(run_pk))


_server_loop: asyncio.AbstractEventLoop | None = None


def bind_server_loop(app: Any) -> Any:
    """ASGI wrapper that remembers the server's event loop, where in-process runs execute."""

    async def application(scope: Any, receive: Any, send: Any) -> Any:
        global _server_loop
        if _server_loop is None:
            _server_loop = asyncio.get_running_loop()
        return await app(scope, receive, send)

    return application


def run_in_process(coroutine: Coroutine[Any, Any, None]) -> None:
    """Execute on the server's loop (so in-memory channel layer groups reach its consumers);
    without a server (a shell, a script), on a thread of its own."""
    loop = _server_loop
    if loop is not None and loop.is_running():
        # A fresh context: the caller's (a view or consumer under sync_to_async) holds asgiref's
        # thread-sensitive executor, which the run's own database calls must not inherit.
        loop.call_soon_threadsafe(run_in_background, coroutine, context=contextvars.Context())
        return
    threading.Thread(target=asyncio.run, args=(coroutine,), daemon=True, name="in-process-run").start()


def run_in_background(coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """Start ``coroutine`` on the running loop and keep it alive until it ends (tasks are weakly held)."""
    task = asyncio.get_running_loop().create_task(coroutine)
    _background_tasks.add(task)
    task.add_done_callback(_background_tasks.discard)
    return task


def _claim(run_pk: Any) -> Run | None:
    """Take a queued run (exactly once, whatever the number of deliveries)."""
    claimed = Run.objects.filter(pk=run_pk, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    if claimed != 1:
        return None
    return Run.objects.select_related("agent", "agent__organization", "created_by", "api_key").get(pk=run_pk)


def _fail(run_pk: Any, detail: Any) -> None:
    Run.objects.filter(pk=run_pk).update(
        status=RunStatus.FAILED, stop_reason="error", error={"message": detail}, completed_at=timezone.now()
    )


async def execute_run(run_pk: Any) -> None:
    """Execute a background run and publish its events to the agent's group. Idempotent per run."""
    run = await sync_to_async(_claim)(run_pk)
    if run is None:
        return
    publisher = EventPublisher(agent_id=run.agent_id)
    try:
        async for event in run_events(run):
            await publisher.publish(event)
    finally:
        await publisher.flush()


async def run_events(run: Run) -> AsyncIterator[EngineEvent]:
    """The events of a claimed background run (its request is stored on the row)."""
    try:
        turn_input = parse_turn_input(run.request)
        turn = await open_turn(
            agent=run.agent,
            run=run,
            turn_input=turn_input,
            stream_tokens=bool(run.request.get("stream_tokens", True)),
            sender_user=run.created_by,
            api_key=run.api_key,
            max_steps=parse_max_steps(run.request),
        )
    except Exception as exc:
        # Refused before it started (a domain error, a provider without a key…): the run fails with why.
        if not isinstance(exc, ApplicationError):
            logger.warning("Run %s could not start: %s", run.pk, exc, exc_info=True)
        detail = exc.detail if isinstance(exc, ApplicationError) else f"{type(exc).__name__}: {exc}"
        await sync_to_async(_fail)(run.pk, detail)
        yield RunFinishedEvent(run_id=run.id, seq=1, stop_reason="error", error=str(detail))
        return
    async for event in turn.events():
        yield event
