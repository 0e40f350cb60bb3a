"""The approvals inbox's WebSocket, at ``/ws/approvals/``: every page's live view of the
organization's pending approvals, and the inbox page's answers to them."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Any, Literal

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from pydantic import Field, TypeAdapter, ValidationError

from accounts.access import SESSION_ORGANIZATION_KEY, membership_for
from agents.approvals.answers import approval_answer
from agents.approvals.inbox import inbox_state
from agents.broadcast import approvals_group
from agents.engine.inputs import MAX_APPROVALS, ApprovalAnswer
from agents.errors import ApplicationError, NotFound
from agents.sockets import (
    CLOSE_FORBIDDEN,
    SERVER_FAULT,
    SocketFrame,
    accepted_frame,
    error_detail,
    scope_login,
    socket_agent,
)

if TYPE_CHECKING:
    from accounts.models import User

logger = logging.getLogger(__name__)


class InboxApproveFrame(SocketFrame):
    type: Literal["approve"]
    agent_id: Annotated[str, Field(max_length=100)]
    approvals: Annotated[list[ApprovalAnswer], Field(min_length=1, max_length=MAX_APPROVALS)]


INBOX_FRAME = TypeAdapter(InboxApproveFrame)


class ApprovalInboxConsumer(AsyncJsonWebsocketConsumer):
    """Every page's view of the organization's pending approvals, at ``/ws/approvals/``.

    On connect and whenever ``agents.broadcast`` announces a change it sends
    ``{"type": "approvals", "count": n, "items": [...]}`` (``agents.approvals.inbox``); the inbox page
    answers with ``{"type": "approve", "agent_id": "agent-…", "approvals": [...]}``, which goes
    through ``agents.approvals.answers.approval_answer`` like the chat's own frame.
    """

    user: User
    organization_id: Any
    group: str

    async def connect(self) -> None:
        login = await scope_login(self)
        if login is None:
            return
        self.user, session = login
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
        agent = socket_agent(user=self.user, organization_id=self.session_organization_id, agent_id=frame.agent_id)
        if agent.organization_id != self.organization_id:
            raise NotFound("Agent not found")
        run = approval_answer(agent=agent, user=self.user, approvals=frame.approvals)
        return accepted_frame(frame.type, [run]) | {"agent_id": frame.agent_id}
