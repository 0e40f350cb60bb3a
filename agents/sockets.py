"""What the product's WebSocket consumers share: close codes, the frame base, the agent lookup,
error and accepted frames."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict

from accounts.access import membership_for
from agents.errors import NotFound
from agents.selectors import agent_get
from agents.wire.messages import public_id

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from channels.generic.websocket import AsyncWebsocketConsumer
    from django.contrib.sessions.backends.base import SessionBase

    from accounts.models import Organization, User
    from agents.errors import ApplicationError
    from agents.models import Agent, Run

SERVER_FAULT = "The server could not handle that just now. Try again in a moment."
# Close codes in the private range: the tab stops reconnecting on these.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_MANY_FRAMES = 4429


class SocketFrame(BaseModel):
    """A frame from a tab: strict, so a typo is an error frame rather than a silently ignored field."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def socket_user(scope: Mapping[str, Any]) -> User | None:
    """The logged-in user of a socket's scope (AuthMiddlewareStack's lazy proxy), or ``None``."""
    user = scope.get("user")
    return cast("User", user) if user is not None and user.is_authenticated else None


async def scope_login(consumer: AsyncWebsocketConsumer) -> tuple[User, SessionBase | dict[str, Any]] | None:
    """The socket's logged-in user and session; ``None`` (the socket closed with 4401) when nobody is logged in."""
    user = socket_user(consumer.scope)
    if user is None:
        await consumer.close(code=CLOSE_UNAUTHENTICATED)
        return None
    session: SessionBase | dict[str, Any] = consumer.scope.get("session") or {}
    return user, session


def socket_organization(user: User, organization_id: Any) -> Organization:
    """The organization a socket's user acts for (``organization_id`` is the session's choice; like
    every page, a user without a membership there acts for their oldest), or ``NotFound``."""
    membership = membership_for(user, organization_id)
    if membership is None:
        raise NotFound("Agent not found")
    return membership.organization


def socket_agent(*, user: User, organization_id: Any, agent_id: str) -> Agent:
    """The agent ``agent_id`` of the organization the socket's user acts for, through the one
    lookup (``agents.selectors.agent_get``): another organization's agent is ``NotFound``."""
    organization = socket_organization(user, organization_id)
    return agent_get(organization=organization, agent_id=agent_id, with_tools=False)


def error_detail(exc: ApplicationError) -> str:
    detail = exc.detail
    if isinstance(detail, dict):
        return str(detail.get("message") or detail)
    return str(detail)


def public_run_ids(runs: Iterable[Run]) -> list[str]:
    return [public_id("run", run.pk) or "" for run in runs]


def accepted_frame(request: str, runs: list[Run]) -> dict[str, Any]:
    return {"type": "accepted", "request": request, "run_ids": public_run_ids(runs)}
