"""The browser chat's WebSocket: one connection per open chat, at ``/ws/agents/<agent id>/``.

Authorized once at connect (a logged-in user whose current organization owns the
agent; the origin is checked by ``AllowedHostsOriginValidator`` in ``config.asgi``),
then a thin adapter: every inbound frame is validated (its message and approval items
are the REST API's, ``agents.engine.inputs``, with the same limits) and handed to one
function of ``agents.chat.actions``; every payload published to the agent's group is forwarded as is.

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
from typing import TYPE_CHECKING, Annotated, Any, Literal

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from pydantic import Field, TypeAdapter, ValidationError

from accounts.access import SESSION_ORGANIZATION_KEY
from accounts.access_watch import watch_groups
from agents.broadcast import agent_group
from agents.chat import actions as chat
from agents.chat.frame_rate import FrameRate
from agents.engine.inputs import MAX_APPROVALS, MAX_MESSAGE_CHARS, MAX_OTID_CHARS, ApprovalAnswer
from agents.errors import ApplicationError, NotFound
from agents.sockets import (
    CLOSE_FORBIDDEN,
    CLOSE_NOT_FOUND,
    CLOSE_TOO_MANY_FRAMES,
    SERVER_FAULT,
    SocketFrame,
    error_detail,
    scope_login,
    socket_agent,
)

if TYPE_CHECKING:
    from accounts.models import User
    from agents.models import Agent, Run

logger = logging.getLogger(__name__)

# An open chat re-checks its user's access on every frame it receives and at least this often
# while it only forwards events (issue 14: access that ends closes the socket).
ACCESS_RECHECK_SECONDS = 30.0


class ResumeFrame(SocketFrame):
    type: Literal["resume"]
    after_seq: int = Field(ge=-1)


class SendFrame(SocketFrame):
    type: Literal["send"]
    text: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)]
    otid: Annotated[str, Field(max_length=MAX_OTID_CHARS)] = ""


class ApproveFrame(SocketFrame):
    type: Literal["approve"]
    approvals: Annotated[list[ApprovalAnswer], Field(min_length=1, max_length=MAX_APPROVALS)]


class CancelFrame(SocketFrame):
    type: Literal["cancel"]


class ContinueFrame(SocketFrame):
    type: Literal["continue"]


class RetryFrame(SocketFrame):
    type: Literal["retry"]


class RegenerateFrame(SocketFrame):
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


class AgentChatConsumer(AsyncJsonWebsocketConsumer):
    agent: Agent
    user: User
    group: str

    async def connect(self) -> None:
        login = await scope_login(self)
        if login is None:
            return
        user, session = login
        try:
            agent = await database_sync_to_async(socket_agent)(
                user=user,
                organization_id=session.get(SESSION_ORGANIZATION_KEY),
                agent_id=self.scope["url_route"]["kwargs"]["agent_id"],
            )
        except NotFound:
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
        """Call the one ``agents.chat.actions`` function the frame asks for (in a worker thread)."""
        agent, user = self.agent, self.user
        if isinstance(frame, ResumeFrame):
            return chat.chat_sync(agent=agent, after_seq=frame.after_seq)
        if isinstance(frame, CancelFrame):
            return chat.chat_accepted(request=frame.type, agent=agent, runs=chat.chat_cancel(agent=agent))
        run: Run
        if isinstance(frame, SendFrame):
            run = chat.chat_send(agent=agent, user=user, text=frame.text, otid=frame.otid)
            return chat.chat_accepted(request=frame.type, agent=agent, runs=[run]) | {"otid": frame.otid}
        if isinstance(frame, ApproveFrame):
            run = chat.chat_approve(agent=agent, user=user, approvals=frame.approvals)
        elif isinstance(frame, ContinueFrame):
            run = chat.chat_continue(agent=agent, user=user)
        elif isinstance(frame, RegenerateFrame):
            run = chat.chat_regenerate(agent=agent, user=user)
        else:
            run = chat.chat_retry(agent=agent, user=user)
        return chat.chat_accepted(request=frame.type, agent=agent, runs=[run])

    async def _error(self, detail: str, *, request: str | None = None) -> None:
        await self.send_json({"type": "error", "detail": detail, "request": request})

    async def agent_events(self, message: dict[str, Any]) -> None:
        """Forward what ``agents.broadcast.publish`` sent to the agent's group, in order."""
        if not await self._access_holds(force=False):
            return
        for payload in message["events"]:
            await self.send_json(payload)
