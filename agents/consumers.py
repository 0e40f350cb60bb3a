"""The browser chat's WebSocket: one connection per open chat, at ``/ws/agents/<agent id>/``.

Authorized once at connect (a logged-in user whose current organization owns the
agent; the origin is checked by ``AllowedHostsOriginValidator`` in ``config.asgi``),
then a thin adapter: every inbound frame is validated (its message and approval items
are the REST API's, ``agents.engine.inputs``, with the same limits) and handed to one
function of ``agents.chat``; every payload published to the agent's group is forwarded as is.

Frames from the tab::

    {"type": "resume", "after_seq": 12}                      -> {"type": "sync", ...}
    {"type": "send", "text": "hi", "otid": "…"}              -> {"type": "accepted", ...}
    {"type": "approve", "approvals": [ApprovalCreate items]} -> {"type": "accepted", ...}
    {"type": "cancel"} | {"type": "continue"} | {"type": "retry"} | {"type": "regenerate"}

Anything else gets ``{"type": "error", "detail": "…", "request": <frame type or null>}``.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from accounts.access import SESSION_ORGANIZATION_KEY, membership_for
from accounts.access_watch import watch_groups
from agents import chat
from agents.approval_inbox import inbox_state
from agents.broadcast import agent_group, approvals_group
from agents.engine.inputs import MAX_APPROVALS, MAX_MESSAGE_CHARS, MAX_OTID_CHARS, ApprovalAnswer
from agents.errors import ApplicationError, NotFound
from agents.frame_rate import FrameRate

if TYPE_CHECKING:
    from django.contrib.sessions.backends.base import SessionBase

    from accounts.models import User
    from agents.models import Agent, Run

logger = logging.getLogger(__name__)

SERVER_FAULT = "The server could not handle that just now. Try again in a moment."
# Close codes in the private range: the tab stops reconnecting on these.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_MANY_FRAMES = 4429
# An open chat re-checks its user's access on every frame it receives and at least this often
# while it only forwards events (issue 14: access that ends closes the socket).
ACCESS_RECHECK_SECONDS = 30.0


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ResumeFrame(_Frame):
    type: Literal["resume"]
    after_seq: int = Field(ge=-1)


class SendFrame(_Frame):
    type: Literal["send"]
    text: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)]
    otid: Annotated[str, Field(max_length=MAX_OTID_CHARS)] = ""


class ApproveFrame(_Frame):
    type: Literal["approve"]
    approvals: Annotated[list[ApprovalAnswer], Field(min_length=1, max_length=MAX_APPROVALS)]


class CancelFrame(_Frame):
    type: Literal["cancel"]


class ContinueFrame(_Frame):
    type: Literal["continue"]


class RetryFrame(_Frame):
    type: Literal["retry"]


class RegenerateFrame(_Frame):
    type: Literal["regenerate"]


Frame = Annotated[
    ResumeFrame | SendFrame | ApproveFrame | CancelFrame | ContinueFrame | RetryFrame | RegenerateFrame,
    Field(discriminator="type"),
]
FRAME = TypeAdapter(Frame)
FRAME_TYPES = ("resume", "send", "approve", "cancel", "continue", "retry", "regenerate")


class FrameError(ValueError):
    pass


def parse_frame(content: Any) -> Frame:
    """The frame ``content`` is, or ``FrameError`` saying what is wrong with it."""
    if not isinstance(content, dict):
        raise FrameError("A frame must be a JSON object.")
    if content.get("type") not in FRAME_TYPES:
        raise FrameError(f"Unknown frame type {content.get('type')!r}; expected one of {', '.join(FRAME_TYPES)}.")
    try:
        return FRAME.validate_python(content)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "frame"
        raise FrameError(f"Invalid {content['type']} frame: {where}: {first['msg']}.") from None


def error_detail(exc: ApplicationError) -> str:
    detail = exc.detail
    if isinstance(detail, dict):
        return str(detail.get("message") or detail)
    return str(detail)


class AgentChatConsumer(AsyncJsonWebsocketConsumer):
    agent: Agent
    user: User
    group: str

    async def connect(self) -> None:
        scope_user = self.scope.get("user")
        if scope_user is None or not scope_user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        user = cast("User", scope_user)  # AuthMiddlewareStack's lazy proxy of the logged-in User
        session: SessionBase | dict[str, Any] = self.scope.get("session") or {}
        agent = await database_sync_to_async(chat.chat_agent)(
            user=user,
            organization_id=session.get(SESSION_ORGANIZATION_KEY),
            agent_id=self.scope["url_route"]["kwargs"]["agent_id"],
        )
        if agent is None:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.user, self.agent, self.group = user, agent, agent_group(agent.id)
        self.session_key = getattr(session, "session_key", None)
        self.access_checked_at = time.monotonic()
        self.frame_rate = FrameRate(burst=settings.CHAT_FRAME_BURST, per_second=settings.CHAT_FRAMES_PER_SECOND)
        # Its user's and session's access groups: a removal, deactivation or logout closes it at once.
        self.access_groups = watch_groups(user_id=user.pk, api_key_id=None, session_key=self.session_key)
        for group in [self.group, *self.access_groups]:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()

    async def _access_holds(self, *, force: bool) -> bool:
        """Re-check the user's access (always with ``force``, else at most every ``ACCESS_RECHECK_SECONDS``);
        close the socket with 4403 when it has ended."""
        if not force and time.monotonic() - self.access_checked_at < ACCESS_RECHECK_SECONDS:
            return True
        self.access_checked_at = time.monotonic()
        holds = await database_sync_to_async(chat.chat_access_holds)(
            user_id=self.user.pk, agent=self.agent, session_key=self.session_key
        )
        if not holds:
            await self.close(code=CLOSE_FORBIDDEN)
        return holds

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
            for group in [self.group, *self.access_groups]:
                await self.channel_layer.group_discard(group, self.channel_name)

    async def access_changed(self, message: dict[str, Any]) -> None:
        """``accounts.access_watch``: a membership, user or key of ours changed; re-check now."""
        await self._access_holds(force=True)

    async def access_ended(self, message: dict[str, Any]) -> None:
        """``accounts.access_watch``: this socket's session logged out."""
        await self.close(code=CLOSE_FORBIDDEN)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if not self.frame_rate.allow():
            # A tab sends a frame per action; a flood is closed rather than answered frame by frame.
            logger.warning("Chat socket for agent %s sent frames too fast; closing it", self.agent.pk)
            await self.close(code=CLOSE_TOO_MANY_FRAMES)
            return
        if text_data is None:
            await self._error("Frames are JSON text, not binary.")
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            await self._error("A frame must be valid JSON.")
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not await self._access_holds(force=True):
            return
        try:
            frame = parse_frame(content)
        except FrameError as exc:
            request = content.get("type") if isinstance(content, dict) else None
            await self._error(str(exc), request=request if isinstance(request, str) else None)
            return
        try:
            reply = await database_sync_to_async(self._handle)(frame)
        except ApplicationError as exc:
            await self._error(error_detail(exc), request=frame.type)
            return
        except Exception:
            # A fault of ours (the database or the channel layer away): say so, keep the socket.
            logger.exception("Chat frame %r failed for agent %s", frame.type, self.agent.pk)
            await self._error(SERVER_FAULT, request=frame.type)
            return
        await self.send_json(reply)

    def _handle(self, frame: Frame) -> dict[str, Any]:
        """Call the one ``agents.chat`` function the frame asks for (in a worker thread)."""
        agent, user = self.agent, self.user
        if isinstance(frame, ResumeFrame):
            return chat.chat_sync(agent=agent, after_seq=frame.after_seq)
        if isinstance(frame, CancelFrame):
            return _accepted(frame.type, chat.chat_cancel(agent=agent))
        run: Run
        if isinstance(frame, SendFrame):
            run = chat.chat_send(agent=agent, user=user, text=frame.text, otid=frame.otid)
            return _accepted(frame.type, [run]) | {"otid": frame.otid}
        if isinstance(frame, ApproveFrame):
            run = chat.chat_approve(agent=agent, user=user, approvals=frame.approvals)
        elif isinstance(frame, ContinueFrame):
            run = chat.chat_continue(agent=agent, user=user)
        elif isinstance(frame, RegenerateFrame):
            run = chat.chat_regenerate(agent=agent, user=user)
        else:
            run = chat.chat_retry(agent=agent, user=user)
        return _accepted(frame.type, [run])

    async def _error(self, detail: str, *, request: str | None = None) -> None:
        await self.send_json({"type": "error", "detail": detail, "request": request})

    async def agent_events(self, message: dict[str, Any]) -> None:
        """Forward what ``agents.broadcast.publish`` sent to the agent's group, in order."""
        if not await self._access_holds(force=False):
            return
        for payload in message["events"]:
            await self.send_json(payload)


def _accepted(request: str, runs: list[Run]) -> dict[str, Any]:
    return {"type": "accepted", "request": request, "run_ids": chat.public_run_ids(runs)}


# --- the organization's approvals inbox --------------------------------------------------------


class InboxApproveFrame(_Frame):
    type: Literal["approve"]
    agent_id: Annotated[str, Field(max_length=100)]
    approvals: Annotated[list[ApprovalAnswer], Field(min_length=1, max_length=MAX_APPROVALS)]


INBOX_FRAME = TypeAdapter(InboxApproveFrame)


class ApprovalInboxConsumer(AsyncJsonWebsocketConsumer):
    """Every page's view of the organization's pending approvals, at ``/ws/approvals/``.

    On connect and whenever ``agents.broadcast`` announces a change it sends
    ``{"type": "approvals", "count": n, "items": [...]}`` (``agents.approval_inbox``); the inbox page
    answers with ``{"type": "approve", "agent_id": "agent-…", "approvals": [...]}``, which goes
    through ``agents.chat.chat_approve`` like the chat's own frame.
    """

    user: User
    organization_id: Any
    group: str

    async def connect(self) -> None:
        scope_user = self.scope.get("user")
        if scope_user is None or not scope_user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = cast("User", scope_user)
        session: SessionBase | dict[str, Any] = self.scope.get("session") or {}
        membership = await database_sync_to_async(membership_for)(self.user, session.get(SESSION_ORGANIZATION_KEY))
        if membership is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.organization_id = membership.organization_id
        self.session_organization_id = session.get(SESSION_ORGANIZATION_KEY)
        self.group = approvals_group(self.organization_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._send_state()

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def _send_state(self) -> None:
        state = await database_sync_to_async(self._state)()
        if state is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        await self.send_json(state)

    def _state(self) -> dict[str, Any] | None:
        membership = membership_for(self.user, self.session_organization_id)
        if membership is None or membership.organization_id != self.organization_id or not self.user.is_active:
            return None
        return inbox_state(membership.organization)

    async def approvals_changed(self, message: dict[str, Any]) -> None:
        await self._send_state()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        try:
            frame = INBOX_FRAME.validate_python(content)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "frame"
            await self.send_json(
                {"type": "error", "detail": f"Invalid frame: {where}: {first['msg']}.", "request": None}
            )
            return
        try:
            reply = await database_sync_to_async(self._approve)(frame)
        except ApplicationError as exc:
            await self.send_json(
                {"type": "error", "detail": error_detail(exc), "request": "approve", "agent_id": frame.agent_id}
            )
            return
        except Exception:
            logger.exception("Inbox approval failed for agent %s", frame.agent_id)
            await self.send_json(
                {"type": "error", "detail": SERVER_FAULT, "request": "approve", "agent_id": frame.agent_id}
            )
            return
        await self.send_json(reply)

    def _approve(self, frame: InboxApproveFrame) -> dict[str, Any]:
        agent = chat.chat_agent(user=self.user, organization_id=self.session_organization_id, agent_id=frame.agent_id)
        if agent is None or agent.organization_id != self.organization_id:
            raise NotFound("Agent not found")
        run = chat.chat_approve(agent=agent, user=self.user, approvals=frame.approvals)
        return _accepted(frame.type, [run]) | {"agent_id": frame.agent_id}
