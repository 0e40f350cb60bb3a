"""``/v1/conversations/{default|agent-…}/…``: Letta's agent-direct mode on the agent's own thread."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from rest_framework.test import APIClient

from agents import services
from agents.models import Agent, Message, Run, RunStatus
from tests.support.streams import TRAILERS, assemble
from tests.tool_sources import DICE_SOURCE
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db

HELLO = [{"role": "user", "content": [{"type": "text", "text": "hello"}], "otid": "otid-hello"}]


@pytest.fixture
def agent(cast) -> Agent:
    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE)
    return services.agent_create(organization=cast.org_a, name="conv", model="demo/echo-1", tool_ids=[dice.public_id])


def streamed_body(response) -> bytes:
    """The whole body of a streamed answer, whether the view streams it from a sync iterator (the
    rows are all there) or an async one (it waits for the live group)."""
    content = response.streaming_content
    if not hasattr(content, "__aiter__"):
        return b"".join(content)

    async def collect() -> bytes:
        return b"".join([chunk async for chunk in content])

    return async_to_sync(collect)()


def sse(response) -> list[Any]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/event-stream; charset=utf-8"
    body = streamed_body(response).decode()
    frames = [frame.removeprefix("data: ") for frame in body.split("\n\n") if frame.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    return [json.loads(frame) for frame in frames[:-1]]


def send(api: APIClient, agent: Agent, path_id: str = "default", **body: Any):
    extra = {"agent_id": agent.public_id} if path_id == "default" else {}
    return api.post(f"/v1/conversations/{path_id}/messages", {"messages": HELLO, **extra, **body}, format="json")


def test_a_send_to_default_streams_by_default_opening_with_a_ping_naming_its_run(alice_api, agent):
    chunks = sse(send(alice_api, agent))

    run = Run.objects.get(agent=agent)
    assert chunks[0]["message_type"] == "ping"
    assert chunks[0]["run_id"] == run.public_id
    assert chunks[0]["id"].startswith("ping-")
    assert [c["message_type"] for c in chunks[1:] if c["message_type"] not in TRAILERS] == [
        "reasoning_message",
        "assistant_message",
    ]
    assert chunks[-2]["stop_reason"] == "end_turn"
    assert run.status == RunStatus.COMPLETED


def test_without_pings_a_stream_does_not_open_with_one(alice_api, agent):
    chunks = sse(send(alice_api, agent, include_pings=False))

    assert chunks[0]["message_type"] == "reasoning_message"


def test_the_agent_id_form_is_the_same_thread(alice_api, agent):
    before = Message.objects.filter(agent=agent, role="user").count()

    response = send(alice_api, agent, agent.public_id, streaming=False)

    assert response.status_code == 200, response.json()
    assert response.json()["stop_reason"]["stop_reason"] == "end_turn"
    assert Message.objects.filter(agent=agent, role="user").count() == before + 1


def test_streaming_false_answers_lettas_json_turn(alice_api, agent):
    response = send(alice_api, agent, streaming=False)

    assert response.status_code == 200
    assert [m["message_type"] for m in response.json()["messages"]] == ["reasoning_message", "assistant_message"]


def test_default_without_an_agent_id_is_a_404(alice_api):
    response = alice_api.post("/v1/conversations/default/messages", {"messages": HELLO}, format="json")

    assert response.status_code == 404
    assert response.json() == {"detail": "NOT_FOUND: Conversation not found with id 'default'"}


def test_empty_messages_are_lettas_422(alice_api, agent):
    response = send(alice_api, agent, messages=[])

    assert response.status_code == 422
    assert response.json() == {"detail": "Messages must not be empty"}


def test_a_send_to_a_busy_thread_is_lettas_conversation_409(alice_api, agent, cast):
    running = Run.objects.create(organization=cast.org_a, agent=agent, background=True)

    response = send(alice_api, agent)

    assert response.status_code == 409
    assert response["x-should-retry"] == "false"
    assert response.json() == {
        "detail": (
            f"CONFLICT: Cannot send a new message: Another request (run_id={running.public_id}) is currently "
            "being processed for this conversation. Please wait for it to complete."
        ),
        "run_id": running.public_id,
    }
    assert Run.objects.filter(agent=agent).count() == 1


def test_the_agents_route_keeps_its_own_busy_text(alice_api, agent, cast):
    Run.objects.create(organization=cast.org_a, agent=agent, background=True)

    response = alice_api.post(f"/v1/agents/{agent.public_id}/messages", {"messages": HELLO}, format="json")

    assert response.status_code == 409
    assert "Another run is already in progress for this agent" in response.json()["detail"]


def test_listing_default_is_the_agents_history(alice_api, agent):
    send(alice_api, agent, streaming=False)

    listed = alice_api.get(f"/v1/conversations/default/messages?agent_id={agent.public_id}&order=desc").json()
    by_agent = alice_api.get(f"/v1/agents/{agent.public_id}/messages?conversation_id=default&order=desc").json()
    by_path = alice_api.get(f"/v1/conversations/{agent.public_id}/messages").json()

    assert listed == by_agent == by_path
    assert [m["message_type"] for m in listed][-2:] == ["reasoning_message", "assistant_message"]


@pytest.mark.parametrize("form", ["default", "agent"])
def test_cancel_cancels_the_threads_active_runs(alice_api, agent, cast, form):
    queued = Run.objects.create(organization=cast.org_a, agent=agent, background=True)
    path = (
        f"/v1/conversations/default/cancel?agent_id={agent.public_id}"
        if form == "default"
        else f"/v1/conversations/{agent.public_id}/cancel"
    )

    response = alice_api.post(path)

    assert response.status_code == 200
    assert response.json() == {queued.public_id: "cancelled"}


@pytest.mark.parametrize("form", ["default", "agent"])
def test_cancel_without_an_active_run_is_lettas_409(alice_api, agent, form):
    path_id = "default" if form == "default" else agent.public_id
    query = f"?agent_id={agent.public_id}" if form == "default" else ""

    response = alice_api.post(f"/v1/conversations/{path_id}/cancel{query}")

    assert response.status_code == 409
    assert response.json() == {"detail": f"CONFLICT: No active runs to cancel for conversation {path_id}"}


# Committed rows: the run stream reads the run from its own connection, which a test transaction hides.
@pytest.mark.django_db(transaction=True)
def test_stream_resumes_a_run_by_run_id_and_by_otid(alice_api, agent):
    inline = [c for c in sse(send(alice_api, agent, include_pings=False)) if c["message_type"] not in TRAILERS]
    run = Run.objects.get(agent=agent)
    path = "/v1/conversations/default/stream"

    by_run = sse(alice_api.post(path, {"agent_id": agent.public_id, "run_id": run.public_id}, format="json"))
    by_otid = sse(alice_api.post(path, {"agent_id": agent.public_id, "otid": "otid-hello"}, format="json"))
    after_first = sse(
        alice_api.post(
            path,
            {"agent_id": agent.public_id, "run_id": run.public_id, "starting_after": inline[0]["seq_id"]},
            format="json",
        )
    )

    assert assemble(by_run) == assemble(inline) == assemble(by_otid)
    assert assemble(inline[:1] + after_first) == assemble(inline)


def test_stream_without_a_run_says_lettas_texts(alice_api, agent, cast):
    path = f"/v1/conversations/{agent.public_id}/stream"

    none_active = alice_api.post(path, {}, format="json")
    unknown_otid = alice_api.post(path, {"otid": "nope"}, format="json")
    unknown_run = alice_api.post(path, {"run_id": "run-00000000-0000-4000-8000-000000000000"}, format="json")
    Run.objects.create(organization=cast.org_a, agent=agent, background=False)
    inline_only = alice_api.post(path, {}, format="json")

    assert (none_active.status_code, none_active.json()) == (
        400,
        {"detail": "INVALID_ARGUMENT: No active runs found for this conversation."},
    )
    assert unknown_otid.status_code == 404
    assert unknown_otid.json()["detail"] == "No run found for otid=nope. The run may have expired or never existed."
    assert unknown_run.json() == {"detail": "Run run-00000000-0000-4000-8000-000000000000 not found."}
    assert inline_only.json() == {
        "detail": "INVALID_ARGUMENT: Run was not created in background mode, so it cannot be retrieved."
    }


def test_compact_answers_lettas_counts(alice_api, agent):
    response = alice_api.post("/v1/conversations/default/compact", {"agent_id": agent.public_id}, format="json")

    assert response.status_code == 200
    assert set(response.json()) == {"summary", "num_messages_before", "num_messages_after"}


def test_recompile_answers_the_system_prompt_as_a_string(alice_api, agent):
    response = alice_api.post(
        "/v1/conversations/default/recompile?dry_run=true", {"agent_id": agent.public_id}, format="json"
    )
    context = alice_api.get(f"/v1/agents/{agent.public_id}/context").json()

    assert response.status_code == 200
    assert response.json() == context["system_prompt"]


def test_preview_raw_payload_stores_nothing(alice_api, agent):
    before = Message.objects.filter(agent=agent).count()

    response = alice_api.post(
        "/v1/conversations/default/messages/preview-raw-payload",
        {"agent_id": agent.public_id, "messages": HELLO},
        format="json",
    )

    assert response.status_code == 200
    assert isinstance(response.json(), dict)
    assert Message.objects.filter(agent=agent).count() == before
    assert not Run.objects.filter(agent=agent).exists()


def test_another_orgs_agent_is_a_404_in_the_default_form(charlie_api, agent):
    response = charlie_api.post(
        "/v1/conversations/default/messages", {"messages": HELLO, "agent_id": agent.public_id}, format="json"
    )
    listed = charlie_api.get(f"/v1/conversations/default/messages?agent_id={agent.public_id}")

    assert (response.status_code, response.json()) == (404, {"detail": "Agent not found"})
    assert listed.status_code == 404
    assert not Run.objects.filter(agent=agent).exists()
