"""The organization's approvals inbox: its selector, its live socket, its page and the header's badge."""

from __future__ import annotations

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.utils import timezone

from accounts.access import SESSION_ORGANIZATION_KEY
from agents import services
from agents.approvals.inbox import pending_approvals
from agents.broadcast import publish
from agents.models import Message
from tests.factories import MessageFactory, RunFactory, asking_for_approval
from tests.support.sockets import frames_until

pytestmark = pytest.mark.django_db(transaction=True)


def ask_for_approval(agent, *call_ids: str, minutes_ago: int = 0) -> Message:
    """The agent's last row asks for approval of ``call_ids``."""
    row = asking_for_approval(agent, *call_ids)
    Message.objects.filter(pk=row.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    return row


def new_agent(organization, name: str):
    return services.agent_create(organization=organization, name=name, model="demo/echo-1")


def acme_agent_asking_for_approval(cast):
    """Acme's agent, its last row asking for approval of ``call-1``."""
    agent = new_agent(cast.org_a, "Acme's agent")
    ask_for_approval(agent, "call-1")
    return agent


async def open_inbox(app, user, organization) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(app, "/ws/approvals/")
    communicator.scope["user"] = user
    communicator.scope["session"] = {SESSION_ORGANIZATION_KEY: organization.pk if organization else None}
    return communicator


# --- the selector --------------------------------------------------------------------------------


def test_pending_approvals_are_the_organizations_waiting_requests_newest_first(cast):
    older = new_agent(cast.org_a, "older")
    newer = new_agent(cast.org_a, "newer")
    answered = new_agent(cast.org_a, "answered")
    other_org = new_agent(cast.org_b, "charlies")
    ask_for_approval(older, "call-old", minutes_ago=10)
    ask_for_approval(newer, "call-a", "call-b", minutes_ago=1)
    ask_for_approval(answered, "call-x")
    MessageFactory(agent=answered, seq=4, role="approval", approvals=[{"type": "approval", "tool_call_id": "call-x"}])
    ask_for_approval(other_org, "call-c")

    pending = pending_approvals(cast.org_a)

    assert [p.agent.name for p in pending] == ["newer", "older"]
    assert [c["tool_call_id"] for c in pending[0].request["tool_calls"]] == ["call-a", "call-b"]
    assert [p.agent.name for p in pending_approvals(cast.org_b)] == ["charlies"]
    assert pending_approvals(None) == []


def test_a_request_being_answered_by_an_active_run_is_not_pending(cast):
    agent = new_agent(cast.org_a, "busy")
    ask_for_approval(agent, "call-1")
    RunFactory(agent=agent, status="queued")

    assert pending_approvals(cast.org_a) == []


# --- the page and the badge ------------------------------------------------------------------------


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_inbox_page_lists_only_the_members_organization_and_every_page_shows_the_count(cast):
    ask_for_approval(new_agent(cast.org_a, "Acme's agent"), "call-1")
    ask_for_approval(new_agent(cast.org_b, "Globex's agent"), "call-2")

    alices = logged_in(cast.alice).get("/approvals/")
    charlies = logged_in(cast.charlie).get("/")

    assert alices.status_code == 200
    assert alices.context["inbox"]["count"] == 1
    assert [item["agent"]["name"] for item in alices.context["items"]] == ["Acme's agent"]
    assert "Globex" not in alices.content.decode().split("inbox-state")[1]
    assert "<title>(1) Approvals" in alices.content.decode()
    assert 'data-count="1"' in charlies.content.decode()
    assert "Acme&#x27;s agent" not in charlies.content.decode()


def test_the_inbox_page_needs_a_login():
    response = Client().get("/approvals/")

    assert response.status_code == 302


# --- the live socket -------------------------------------------------------------------------------


async def test_the_inbox_socket_refuses_anonymous_visitors(chat_app):
    communicator = await open_inbox(chat_app, AnonymousUser(), None)

    connected, code = await communicator.connect()

    assert (connected, code) == (False, 4401)


async def test_the_inbox_socket_sends_the_state_then_every_change_of_its_organization_only(chat_app, cast):
    acme = await database_sync_to_async(new_agent)(cast.org_a, "Acme's agent")
    globex = await database_sync_to_async(new_agent)(cast.org_b, "Globex's agent")
    alice = await open_inbox(chat_app, cast.alice, cast.org_a)
    charlie = await open_inbox(chat_app, cast.charlie, cast.org_b)
    assert (await alice.connect())[0] and (await charlie.connect())[0]
    assert (await alice.receive_json_from())["count"] == 0
    assert (await charlie.receive_json_from())["count"] == 0

    await database_sync_to_async(ask_for_approval)(globex, "call-0")
    assert (await charlie.receive_nothing(timeout=0.3)) is True  # rows alone announce nothing
    await database_sync_to_async(ask_for_approval)(acme, "call-1")
    request = await database_sync_to_async(lambda: pending_approvals(cast.org_a)[0].request)()
    await publish(acme.pk, [{"type": "run_finished", "run_id": "run-x", "seq": 1, "pending_approval": request}])
    state = await alice.receive_json_from()

    assert state["type"] == "approvals"
    assert state["count"] == 1
    assert state["items"][0]["agent"] == {"id": acme.public_id, "name": "Acme's agent"}
    assert state["items"][0]["request"]["id"] == request["id"]
    assert await charlie.receive_nothing(timeout=0.3)  # another organization hears nothing of it
    await alice.disconnect()
    await charlie.disconnect()


async def test_answering_from_the_inbox_runs_the_turn_and_the_inbox_empties(chat_app, cast):
    agent = await database_sync_to_async(acme_agent_asking_for_approval)(cast)
    alice = await open_inbox(chat_app, cast.alice, cast.org_a)
    await alice.connect()
    assert (await alice.receive_json_from())["count"] == 1

    await alice.send_json_to(
        {
            "type": "approve",
            "agent_id": agent.public_id,
            "approvals": [{"type": "approval", "tool_call_id": "call-1", "approve": False, "reason": "not now"}],
        }
    )
    frames = await frames_until(alice, lambda f: f.get("type") == "approvals" and f["count"] == 0)

    assert frames[0]["type"] == "accepted"
    assert frames[0]["agent_id"] == agent.public_id
    answer = await database_sync_to_async(Message.objects.filter(agent=agent, role="approval").get)()
    assert answer.approvals[0]["reason"] == "not now"
    await alice.disconnect()


async def test_the_inbox_cannot_answer_another_organizations_approval(chat_app, cast):
    agent = await database_sync_to_async(acme_agent_asking_for_approval)(cast)
    charlie = await open_inbox(chat_app, cast.charlie, cast.org_b)
    await charlie.connect()
    await charlie.receive_json_from()

    await charlie.send_json_to(
        {
            "type": "approve",
            "agent_id": agent.public_id,
            "approvals": [{"type": "approval", "tool_call_id": "call-1", "approve": True}],
        }
    )
    error = await charlie.receive_json_from()

    assert error == {"type": "error", "detail": "Agent not found", "request": "approve", "agent_id": agent.public_id}
    assert await database_sync_to_async(Message.objects.filter(agent=agent, role="approval").exists)() is False
    await charlie.disconnect()
