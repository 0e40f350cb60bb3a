"""The chat's WebSocket app in-process, and helpers to drive it (pytest plugin, see tests/conftest.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from accounts.access import SESSION_ORGANIZATION_KEY
from agents.routing import websocket_urlpatterns
from agents.runs import dispatch

if TYPE_CHECKING:
    from accounts.models import Organization
    from agents.models import Agent

IN_MEMORY_LAYER = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
RECEIVE_TIMEOUT = 10


@pytest.fixture
def chat_app(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The chat's WebSocket routes, executing runs in-process on the test's event loop.

    Runs stay in-process and the channel layer in memory even when the suite runs with
    ``REDIS_URL`` set: the real-worker path has its own tests (``tests/runs/test_worker.py``).
    """
    settings.RUN_EXECUTOR = "inprocess"
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER
    settings.DEMO_TOKEN_DELAY = 0
    monkeypatch.setattr(dispatch, "_server_loop", None)  # remembered afresh on this test's loop
    return dispatch.bind_server_loop(URLRouter(websocket_urlpatterns))


async def open_chat(
    app: Any, user: Any, agent: Agent, *, organization: Organization | None = None
) -> tuple[WebsocketCommunicator, bool, int | None]:
    """A communicator on ``agent``'s chat as ``user`` (acting for ``organization``); connected?, close code."""
    communicator = WebsocketCommunicator(app, f"/ws/agents/{agent.public_id}/")
    communicator.scope["user"] = user
    communicator.scope["session"] = {SESSION_ORGANIZATION_KEY: organization.pk if organization else None}
    connected, code = await communicator.connect()
    return communicator, connected, code


async def frames_until(communicator: WebsocketCommunicator, done: Any, timeout: float = RECEIVE_TIMEOUT) -> list[dict]:
    """Every frame received up to and including the first one for which ``done(frame)`` is true."""
    frames: list[dict] = []
    while True:
        frame = await communicator.receive_json_from(timeout=timeout)
        frames.append(frame)
        if done(frame):
            return frames


def finished(frame: dict) -> bool:
    return frame.get("type") == "run_finished"


@database_sync_to_async
def refreshed(instance: Any) -> Any:
    instance.refresh_from_db()
    return instance
