"""Issue 14 items 7 and 9: streams are capped and end with their access; sockets are rate-limited.

Item 7: open SSE streams are capped per API key and per user (a Letta-shaped 429 that starts
nothing); session callers of ``/v1`` are throttled; a chat socket that floods frames is closed
with 4429; starting a run sweeps only the agent at hand.

Item 9: an open SSE stream or chat socket closes at once when its key is revoked, its user is
removed from the organization or deactivated, or its session logs out (a group message,
``accounts.access_watch``), and by itself at the next periodic re-check when its key expires.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from datetime import timedelta
from importlib import import_module
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.test import AsyncClient
from django.utils import timezone

from accounts import services
from accounts.access import SESSION_ORGANIZATION_KEY
from accounts.authentication import SessionUserRateThrottle
from accounts.models import ApiKey, Membership, User
from agents.models import Run, RunStatus
from tests.factories import AgentFactory, RunFactory, api_key_for
from tests.support.sockets import open_chat

if TYPE_CHECKING:
    from tests.conftest import Cast

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

IN_MEMORY_LAYER = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
CLOSED_FRAME_TYPE = "access_ended"


@pytest.fixture
def streams(settings: Any) -> Any:
    """Run streams that stay open (a running run), keep-alives every 50 ms, a fresh slot cache."""
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER
    settings.SSE_KEEPALIVE_SECONDS = 0.05
    settings.STREAM_ACCESS_RECHECK_SECONDS = 3600  # only a group message can close a stream quickly
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": uuid.uuid4().hex}
    }
    return settings


@database_sync_to_async
def running_run(cast: Cast) -> Run:
    agent = AgentFactory(organization=cast.org_a)
    return RunFactory(agent=agent, status=RunStatus.RUNNING, heartbeat_at=timezone.now())


class KeyClient(AsyncClient):
    """An async client that sends an API key with every request (AsyncClient ignores ``headers=`` given once)."""

    def __init__(self, raw_key: str) -> None:
        super().__init__()
        self.authorization = {"Authorization": f"Bearer {raw_key}"}

    async def generic(self, *args: Any, headers: Any = None, **kwargs: Any) -> Any:
        return await super().generic(*args, headers={**self.authorization, **(headers or {})}, **kwargs)


def key_client(raw_key: str) -> AsyncClient:
    return KeyClient(raw_key)


@dataclass
class OpenStream:
    response: Any
    chunks: Any

    def __aiter__(self) -> Any:
        return self.chunks

    async def aclose(self) -> None:
        """Hang up, as Django's handler does for a client that goes: the response is closed."""
        await self.chunks.aclose()
        await sync_to_async(self.response.close)()


async def open_stream(client: AsyncClient, run: Run) -> OpenStream:
    response = await client.post(f"/v1/runs/{run.public_id}/stream", {}, content_type="application/json")
    assert response.status_code == 200, response.content
    chunks = aiter(response.streaming_content)
    assert (await anext(chunks)).startswith(b":")  # the first keep-alive: the stream is open
    return OpenStream(response, chunks)


async def rest_of(stream: OpenStream) -> list[bytes]:
    """Every chunk until the stream ends (the test's timeout fails one that never does)."""
    return [chunk async for chunk in stream if not chunk.startswith(b":")]


def closed_for_access(rest: list[bytes]) -> bool:
    frames = [json.loads(chunk.decode().removeprefix("data: ")) for chunk in rest]
    return frames[-1]["message_type"] == "error_message" and frames[-1]["error_type"] == CLOSED_FRAME_TYPE


# --- item 7 ---------------------------------------------------------------------------------------


async def test_an_api_key_beyond_its_open_stream_cap_gets_a_letta_shaped_429_and_starts_nothing(cast, streams):
    streams.STREAMS_PER_API_KEY = 1
    _, raw_key = await database_sync_to_async(api_key_for)(cast.org_a, cast.alice)
    client = key_client(raw_key)
    run = await running_run(cast)
    first = await open_stream(client, run)

    refused = await client.post(
        f"/v1/agents/{(await database_sync_to_async(lambda: run.agent.public_id)())}/messages/stream",
        {"messages": [{"role": "user", "content": "one stream too many"}]},
        content_type="application/json",
    )

    assert refused.status_code == 429
    assert refused.json() == {
        "detail": "Too many open streams: this API key already has 1 open. Close one and try again."
    }
    assert int(refused["Retry-After"]) > 0
    assert await database_sync_to_async(Run.objects.count)() == 1  # the refused send started no run
    await first.aclose()
    again = await open_stream(client, run)  # a closed stream frees its slot
    await again.aclose()


async def test_a_user_beyond_their_open_stream_cap_gets_429_whatever_key_or_session_they_use(cast, streams):
    streams.STREAMS_PER_USER = 1
    _, first_key = await database_sync_to_async(api_key_for)(cast.org_a, cast.alice, "first")
    _, second_key = await database_sync_to_async(api_key_for)(cast.org_a, cast.alice, "second")
    run = await running_run(cast)
    first = await open_stream(key_client(first_key), run)

    refused = await key_client(second_key).post(f"/v1/runs/{run.public_id}/stream", {}, content_type="application/json")

    assert refused.status_code == 429
    assert refused.json()["detail"] == "Too many open streams: this user already has 1 open. Close one and try again."
    await first.aclose()


def test_session_callers_of_the_api_are_throttled_per_user(client, cast, settings, monkeypatch):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": uuid.uuid4().hex}
    }
    monkeypatch.setattr(SessionUserRateThrottle, "THROTTLE_RATES", {"session_user": "3/minute"})
    client.force_login(cast.alice)

    statuses = [client.get("/v1/agents/").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    assert client.get("/v1/agents/").json()["detail"].startswith("Request was throttled.")


async def test_a_chat_socket_that_floods_frames_is_closed_with_4429(cast, settings, monkeypatch):
    from tests.support.sockets import IN_MEMORY_LAYER as CHAT_LAYER

    settings.CHANNEL_LAYERS = CHAT_LAYER
    settings.CHAT_FRAME_BURST = 5
    settings.CHAT_FRAMES_PER_SECOND = 0.001
    app = await _chat_app(monkeypatch, settings)
    agent = await database_sync_to_async(AgentFactory)(organization=cast.org_a)
    communicator, connected, _ = await open_chat(app, cast.alice, agent, organization=cast.org_a)
    assert connected

    answers = []
    for _ in range(5):
        await communicator.send_json_to({"type": "resume", "after_seq": 0})
        answers.append((await communicator.receive_json_from())["type"])
    await communicator.send_json_to({"type": "resume", "after_seq": 0})
    closed = await communicator.receive_output(timeout=5)

    assert answers == ["sync"] * 5
    assert closed == {"type": "websocket.close", "code": 4429}


def test_starting_a_run_sweeps_only_the_agent_at_hand(cast, settings):
    from rest_framework.test import APIClient

    settings.RUN_EXECUTOR = "inprocess"
    settings.DEMO_TOKEN_DELAY = 0
    long_ago = timezone.now() - timedelta(hours=1)
    agent = AgentFactory(organization=cast.org_a)
    own_dead_run = RunFactory(agent=agent, status=RunStatus.RUNNING, heartbeat_at=long_ago)
    others_dead_run = RunFactory(
        agent=AgentFactory(organization=cast.org_b), status=RunStatus.RUNNING, heartbeat_at=long_ago
    )
    _, raw_key = api_key_for(cast.org_a, cast.alice)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    response = client.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": "hi"}]}, format="json"
    )

    assert response.status_code == 200, response.content
    own_dead_run.refresh_from_db()
    others_dead_run.refresh_from_db()
    assert own_dead_run.status == RunStatus.FAILED  # this agent's dead run was swept first
    assert others_dead_run.status == RunStatus.RUNNING  # another organization's agent was not touched


# --- item 9: SSE ----------------------------------------------------------------------------------


async def test_revoking_an_api_key_closes_its_open_streams_at_once(cast, streams):
    key, raw_key = await database_sync_to_async(api_key_for)(cast.org_a, cast.alice)
    chunks = await open_stream(key_client(raw_key), await running_run(cast))

    await database_sync_to_async(services.api_key_revoke)(api_key=key)

    assert closed_for_access(await rest_of(chunks))


async def test_removing_a_member_closes_the_streams_of_their_session_and_their_keys_at_once(cast, streams):
    _, raw_key = await database_sync_to_async(api_key_for)(cast.org_a, cast.bob)
    run = await running_run(cast)
    session = AsyncClient()
    await session.aforce_login(cast.bob)
    by_session = await open_stream(session, run)
    by_key = await open_stream(key_client(raw_key), run)

    await database_sync_to_async(services.membership_remove)(
        actor=await database_sync_to_async(Membership.objects.get)(user=cast.alice, organization=cast.org_a),
        membership=await database_sync_to_async(Membership.objects.get)(user=cast.bob, organization=cast.org_a),
    )

    assert closed_for_access(await rest_of(by_session))
    assert closed_for_access(await rest_of(by_key))


async def test_deactivating_a_user_closes_their_open_streams_at_once(cast, streams):
    session = AsyncClient()
    await session.aforce_login(cast.bob)
    chunks = await open_stream(session, await running_run(cast))

    bob = await database_sync_to_async(User.objects.get)(pk=cast.bob.pk)
    bob.is_active = False
    await database_sync_to_async(bob.save)()

    assert closed_for_access(await rest_of(chunks))


async def test_logging_out_closes_that_sessions_streams_and_only_those(cast, streams):
    run = await running_run(cast)
    leaving, staying = AsyncClient(), AsyncClient()
    await leaving.aforce_login(cast.alice)
    await staying.aforce_login(cast.alice)
    leaving_stream = await open_stream(leaving, run)
    staying_stream = await open_stream(staying, run)

    await leaving.post("/accounts/logout/")

    assert closed_for_access(await rest_of(leaving_stream))
    assert (await anext(staying_stream.chunks)).startswith(b":")  # the other browser's stream goes on
    await staying_stream.aclose()


async def test_an_expired_key_closes_its_stream_at_the_next_periodic_recheck(cast, streams):
    streams.STREAM_ACCESS_RECHECK_SECONDS = 0.2
    key, raw_key = await database_sync_to_async(api_key_for)(cast.org_a, cast.alice)
    chunks = await open_stream(key_client(raw_key), await running_run(cast))

    # An UPDATE sends no signal: only the periodic re-check can notice.
    await database_sync_to_async(ApiKey.objects.filter(pk=key.pk).update)(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert closed_for_access(await rest_of(chunks))


# --- item 9: WebSockets ---------------------------------------------------------------------------


async def _chat_app(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Any:
    from channels.routing import URLRouter

    from agents.routing import websocket_urlpatterns
    from agents.runs import dispatch

    settings.RUN_EXECUTOR = "inprocess"
    monkeypatch.setattr(dispatch, "_server_loop", None)
    return dispatch.bind_server_loop(URLRouter(websocket_urlpatterns))


async def _open_chat_with_session(app: Any, user: User, cast: Cast) -> tuple[WebsocketCommunicator, Any]:
    agent = await database_sync_to_async(AgentFactory)(organization=cast.org_a)
    store = import_module(django_settings.SESSION_ENGINE).SessionStore()
    store[SESSION_ORGANIZATION_KEY] = str(cast.org_a.pk)
    await sync_to_async(store.save)()
    communicator = WebsocketCommunicator(app, f"/ws/agents/{agent.public_id}/")
    communicator.scope["user"] = user
    communicator.scope["session"] = store
    connected, _ = await communicator.connect()
    assert connected
    return communicator, store


async def test_removing_a_member_closes_their_chat_socket_without_waiting_for_a_frame(cast, settings, monkeypatch):
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER
    monkeypatch.setattr("agents.chat.consumers.ACCESS_RECHECK_SECONDS", 3600)
    communicator, _ = await _open_chat_with_session(await _chat_app(monkeypatch, settings), cast.bob, cast)

    await database_sync_to_async(Membership.objects.filter(user=cast.bob, organization=cast.org_a).delete)()

    assert await communicator.receive_output(timeout=10) == {"type": "websocket.close", "code": 4403}


async def test_logging_out_closes_the_sessions_chat_socket_at_once(cast, settings, monkeypatch):
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYER
    monkeypatch.setattr("agents.chat.consumers.ACCESS_RECHECK_SECONDS", 3600)
    communicator, store = await _open_chat_with_session(await _chat_app(monkeypatch, settings), cast.alice, cast)
    browser = AsyncClient()
    browser.cookies[django_settings.SESSION_COOKIE_NAME] = store.session_key
    await sync_to_async(_log_in_session)(store, cast.alice)

    await browser.post("/accounts/logout/")

    assert await communicator.receive_output(timeout=10) == {"type": "websocket.close", "code": 4403}


def _log_in_session(store: Any, user: User) -> None:
    """Make ``store`` the session of ``user``, as a login would (so logging out through it is theirs)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.save()


async def test_nothing_else_is_disturbed(cast, streams):
    """A control: a stream whose access holds keeps streaming across access changes of others."""
    _, raw_key = await database_sync_to_async(api_key_for)(cast.org_a, cast.alice)
    other_key, _ = await database_sync_to_async(api_key_for)(cast.org_a, cast.alice, "other")
    chunks = await open_stream(key_client(raw_key), await running_run(cast))

    await database_sync_to_async(services.api_key_revoke)(api_key=other_key)
    await asyncio.sleep(0.2)

    assert (await anext(chunks.chunks)).startswith(b":")
    await chunks.aclose()
