"""Sending messages through the API: blocking, SSE, async, cancel, reset, dry run, context, runs and steps."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.models import Agent, Message, Run, Step
from tests.support.api import api_client
from tests.support.streams import TOOL_TURN, seq_ids
from tests.tool_sources import DICE_SOURCE, SECRET_SOURCE
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_agent(cast) -> Agent:
    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE)
    secret = tool_upsert_from_source(organization=cast.org_a, source_code=SECRET_SOURCE, default_requires_approval=True)
    return services.agent_create(
        organization=cast.org_a, name="demo", model="demo/echo-1", tool_ids=[dice.public_id, secret.public_id]
    )


def send(api: APIClient, agent: Agent, text: str, **extra: Any):
    return api.post(
        f"/v1/agents/{agent.public_id}/messages",
        {"messages": [{"role": "user", "content": text}], **extra},
        format="json",
    )


def test_streaming_false_answers_the_whole_turn_as_json(alice_api, demo_agent):
    response = send(alice_api, demo_agent, "hello", streaming=False)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json()["stop_reason"]["stop_reason"] == "end_turn"


def sse(response) -> list[Any]:
    assert response["Content-Type"] == "text/event-stream; charset=utf-8"
    body = b"".join(response).decode()
    frames = [frame.removeprefix("data: ") for frame in body.split("\n\n") if frame.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    return [json.loads(frame) for frame in frames[:-1]]


def test_a_blocking_message_returns_the_turn_in_lettas_shape(alice_api, demo_agent):
    response = send(alice_api, demo_agent, "hello there", max_steps=5)

    assert response.status_code == 200, response.json()
    body = response.json()
    assert [m["message_type"] for m in body["messages"]] == ["reasoning_message", "assistant_message"]
    assert body["stop_reason"] == {"message_type": "stop_reason", "stop_reason": "end_turn"}
    assert body["usage"]["step_count"] == 1
    assert body["usage"]["total_tokens"] > 0
    run = Run.objects.get()
    assert body["usage"]["run_ids"] == [run.public_id]
    assert (run.status, run.stop_reason) == ("completed", "end_turn")


def test_an_approval_gated_call_waits_and_the_approval_runs_it(alice_api, demo_agent):
    body = send(alice_api, demo_agent, "call get_secret_code with input_text=hi").json()
    request = body["messages"][-1]
    assert request["message_type"] == "approval_request_message"
    assert body["stop_reason"]["stop_reason"] == "requires_approval"

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages",
        {
            "messages": [
                {
                    "approvals": [
                        {"type": "approval", "approve": True, "tool_call_id": request["tool_call"]["tool_call_id"]}
                    ]
                }
            ]
        },
        format="json",
    )

    assert response.status_code == 200
    messages = response.json()["messages"]
    assert messages[0]["message_type"] == "tool_return_message"
    assert messages[0]["tool_return"] == "code-hi"
    assert messages[0]["stdout"] == [] and messages[0]["stderr"] == []


def test_a_user_message_during_a_pending_approval_is_409_with_lettas_body(alice_api, demo_agent):
    pending = send(alice_api, demo_agent, "call get_secret_code with input_text=hi").json()["messages"][-1]

    response = send(alice_api, demo_agent, "hi again")

    assert response.status_code == 409
    assert response.json()["detail"]["code"] == "PENDING_APPROVAL"
    assert response.json()["detail"]["pending_request_id"] == pending["id"]
    assert Run.objects.count() == 1


def test_a_malformed_message_body_is_a_422_naming_the_field(alice_api, demo_agent):
    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages", {"messages": [{"role": "user"}]}, format="json"
    )

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "messages", 0, "content"]
    assert not Message.objects.filter(agent=demo_agent, role="user").exclude(seq=1).exists()


# letta-client 1.x streams through ``POST …/messages`` with ``"streaming": true``; 0.1.324 through ``/stream``.
STREAM_ROUTES = pytest.mark.parametrize(
    ("route", "streaming"), [("messages/stream", {}), ("messages", {"streaming": True})], ids=["stream", "streaming"]
)


@STREAM_ROUTES
def test_streaming_tokens_sends_deltas_then_stop_reason_usage_and_done(alice_api, demo_agent, route, streaming):
    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/{route}",
        {"messages": [{"role": "user", "content": "hello"}], "stream_tokens": True, **streaming},
        format="json",
    )

    chunks = sse(response)
    types = [c["message_type"] for c in chunks]
    assert types[-2:] == ["stop_reason", "usage_statistics"]
    deltas = [c for c in chunks if c["message_type"] == "assistant_message"]
    assert len(deltas) > 1
    assert len({(c["id"], c["otid"]) for c in deltas}) == 1
    stored = Message.objects.filter(agent=demo_agent, role="assistant").get()
    assert deltas[0]["id"] == stored.public_id
    assert "".join(c["content"] for c in deltas) == stored.content[-1]["text"]


@STREAM_ROUTES
def test_streaming_without_tokens_sends_whole_messages(alice_api, demo_agent, route, streaming):
    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/{route}",
        {"messages": [{"role": "user", "content": "call roll_dice with num_sides=6"}], **streaming},
        format="json",
    )

    types = [c["message_type"] for c in sse(response)]
    assert types == [*TOOL_TURN, "stop_reason", "usage_statistics"]


def test_tool_call_deltas_carry_their_own_seq_id_and_the_calls_id_and_otid(alice_api, demo_agent):
    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages/stream",
        {"messages": [{"role": "user", "content": "call roll_dice with num_sides=6"}], "stream_tokens": True},
        format="json",
    )

    calls = [c for c in sse(response) if c["message_type"] == "tool_call_message"]
    stored = Message.objects.filter(agent=demo_agent, role="assistant").order_by("seq").first()
    assert len(calls) > 2
    assert {(c["id"], c["otid"]) for c in calls} == {(stored.public_id, calls[0]["otid"])}
    assert calls[0]["tool_call"]["arguments"] is None
    assert all(c["tool_calls"] is None for c in calls)
    assert "".join(c["tool_call"]["arguments"] or "" for c in calls) == stored.tool_calls[0]["arguments"]
    assert len({c["seq_id"] for c in calls}) == len(calls)


def test_stream_errors_before_the_first_chunk_are_plain_json(alice_api, demo_agent):
    send(alice_api, demo_agent, "call get_secret_code with input_text=hi")

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages/stream",
        {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": True},
        format="json",
    )

    assert response.status_code == 409
    assert response.json()["detail"]["code"] == "PENDING_APPROVAL"


def test_runs_and_steps_of_a_turn_are_listed_and_scoped(alice_api, charlie_api, demo_agent):
    send(alice_api, demo_agent, "call roll_dice with num_sides=6")
    run = Run.objects.get()

    listed = alice_api.get("/v1/runs/", {"agent_id": demo_agent.public_id}).json()
    assert [r["id"] for r in listed] == [run.public_id]
    assert listed[0]["status"] == "completed"
    steps = alice_api.get(f"/v1/runs/{run.public_id}/steps").json()
    assert [s["status"] for s in steps] == ["success", "success"]
    assert alice_api.get(f"/v1/steps/{steps[0]['id']}").json()["run_id"] == run.public_id
    usage = alice_api.get(f"/v1/runs/{run.public_id}/usage").json()
    assert usage["step_count"] == 2
    messages = alice_api.get(f"/v1/runs/{run.public_id}/messages").json()
    assert "tool_return_message" in [m["message_type"] for m in messages]

    assert charlie_api.get("/v1/runs/").json() == []
    for path in ("", "/steps", "/usage", "/messages"):
        assert charlie_api.get(f"/v1/runs/{run.public_id}{path}").status_code == 404
    assert charlie_api.get(f"/v1/steps/{steps[0]['id']}").status_code == 404
    assert charlie_api.post(f"/v1/runs/{run.public_id}/stream", {}, format="json").status_code == 404


def test_it_rejects_other_org_on_every_sending_endpoint(charlie_api, demo_agent):
    base = f"/v1/agents/{demo_agent.public_id}"
    body = {"messages": [{"role": "user", "content": "hi"}]}
    for method, path in [
        ("post", "/messages"),
        ("post", "/messages/stream"),
        ("post", "/messages/async"),
        ("post", "/messages/cancel"),
        ("post", "/messages/preview-raw-payload"),
        ("patch", "/reset-messages"),
        ("get", "/context"),
    ]:
        response = getattr(charlie_api, method)(base + path, body, format="json")
        assert response.status_code == 404, path
    assert not Run.objects.exists()


def test_the_async_endpoint_refuses_input_the_agent_cannot_take_now(alice_api, demo_agent):
    send(alice_api, demo_agent, "call get_secret_code with input_text=hi")

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages/async",
        {"messages": [{"role": "user", "content": "hi"}]},
        format="json",
    )

    assert response.status_code == 409
    assert Run.objects.count() == 1


def test_cancelling_a_queued_run_cancels_it_at_once(alice_api, demo_agent):
    run = Run.objects.create(organization=demo_agent.organization, agent=demo_agent, background=True)

    response = alice_api.post(f"/v1/agents/{demo_agent.public_id}/messages/cancel", {}, format="json")

    assert response.json() == {run.public_id: "cancelled"}
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("cancelled", "cancelled")


def test_cancel_answers_422_naming_run_ids_that_are_not_a_list(alice_api, demo_agent):
    # ``{"run_ids": true}`` was a 500 (iterating a bool).
    run = Run.objects.create(organization=demo_agent.organization, agent=demo_agent, background=True)

    response = alice_api.post(f"/v1/agents/{demo_agent.public_id}/messages/cancel", {"run_ids": True}, format="json")

    assert (response.status_code, response.json()["detail"][0]["loc"]) == (422, ["body", "run_ids"])
    run.refresh_from_db()
    assert run.status == "queued"


def test_cancel_stops_only_the_runs_named(alice_api, demo_agent):
    kept, cancelled = (
        Run.objects.create(organization=demo_agent.organization, agent=demo_agent, background=True) for _ in range(2)
    )

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages/cancel", {"run_ids": [cancelled.public_id]}, format="json"
    )

    assert response.json() == {cancelled.public_id: "cancelled"}
    assert Run.objects.get(pk=kept.pk).status == "queued"


def test_the_resumable_run_stream_replays_from_a_seq_id(alice_api, demo_agent):
    send(alice_api, demo_agent, "call roll_dice with num_sides=6")
    run = Run.objects.get()

    everything = sse(alice_api.post(f"/v1/runs/{run.public_id}/stream", {}, format="json"))
    third = everything[2]["seq_id"]
    resumed = sse(alice_api.post(f"/v1/runs/{run.public_id}/stream", {"starting_after": third}, format="json"))

    assert seq_ids(everything) == sorted(set(seq_ids(everything)))
    assert resumed[:-2] == everything[3:-2]
    assert resumed[-2] == {"message_type": "stop_reason", "stop_reason": "end_turn"}


def test_reset_starts_a_fresh_context_and_keeps_history(alice_api, demo_agent):
    send(alice_api, demo_agent, "remember me")

    response = alice_api.patch(f"/v1/agents/{demo_agent.public_id}/reset-messages?add_default_initial_messages=true")

    assert response.status_code == 200
    demo_agent.refresh_from_db()
    in_context = list(Message.objects.in_context(demo_agent))
    assert [m.role for m in in_context] == ["system", "user"]
    assert Message.objects.filter(agent=demo_agent).count() == 6
    context = alice_api.get(f"/v1/agents/{demo_agent.public_id}/context").json()
    assert context["num_messages"] == 2


@pytest.mark.parametrize(
    ("query", "body", "roles"),
    [
        ("", None, ["system"]),
        ("", {}, ["system"]),
        ("", {"add_default_initial_messages": False}, ["system"]),
        ("", {"add_default_initial_messages": True}, ["system", "user"]),
        ("?add_default_initial_messages=true", {}, ["system", "user"]),
    ],
    ids=["nothing", "empty-body", "body-false", "body-true", "query-true"],
)
def test_reset_reads_the_flag_from_the_body_or_the_query_and_defaults_to_false(
    alice_api, demo_agent, query, body, roles
):
    send(alice_api, demo_agent, "remember me")

    url = f"/v1/agents/{demo_agent.public_id}/reset-messages{query}"
    response = alice_api.patch(url, body, format="json") if body is not None else alice_api.patch(url)

    assert response.status_code == 200
    demo_agent.refresh_from_db()
    assert [m.role for m in Message.objects.in_context(demo_agent)] == roles


def test_the_dry_run_returns_the_payload_without_persisting(alice_api, demo_agent):
    before = Message.objects.count()

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages/preview-raw-payload",
        {"messages": [{"role": "user", "content": "hello"}]},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["turns"] == 2
    assert Message.objects.count() == before
    assert not Run.objects.exists() and not Step.objects.exists()


def test_the_dry_run_is_the_exact_anthropic_body_and_calls_nothing(alice_api, cast, settings, fake_llm):
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    agent = services.agent_create(organization=cast.org_a, name="claude", model="anthropic/claude-sonnet-4-5-20250929")

    payload = alice_api.post(
        f"/v1/agents/{agent.public_id}/messages/preview-raw-payload",
        {"messages": [{"role": "user", "content": "hello"}]},
        format="json",
    ).json()

    assert payload["model"] == "claude-sonnet-4-5-20250929"
    assert payload["messages"][-1]["role"] == "user"
    assert "hello" in json.dumps(payload["messages"][-1])
    assert payload["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert fake_llm.requests == []


def test_the_context_overview_lists_tools_and_marks_estimates(alice_api, demo_agent):
    context = alice_api.get(f"/v1/agents/{demo_agent.public_id}/context").json()

    assert context["context_window_size_max"] == demo_agent.context_window
    assert {f["function"]["name"] for f in context["functions_definitions"]} == {"roll_dice", "get_secret_code"}
    assert context["num_messages"] == 2
    assert context["token_counts_estimated"] is True


def test_no_key_is_a_401(demo_agent):
    response = APIClient().post(f"/v1/agents/{demo_agent.public_id}/messages", {"messages": []}, format="json")
    assert response.status_code == 401


def test_bob_can_use_the_same_agent_with_a_key_of_his_organization(cast, demo_agent):
    response = send(api_client(cast.org_a, cast.bob), demo_agent, "hi")
    assert response.status_code == 200


def test_stream_flags_must_be_booleans(alice_api, demo_agent):
    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages/stream",
        {"messages": [{"role": "user", "content": "hi"}], "stream_tokens": "false"},
        format="json",
    )

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "stream_tokens"]
    assert not Run.objects.exists()


def test_run_messages_page_with_message_cursors(alice_api, charlie_api, demo_agent):
    send(alice_api, demo_agent, "call roll_dice with num_sides=6")
    run = Run.objects.get()
    everything = alice_api.get(f"/v1/runs/{run.public_id}/messages").json()
    first_row = everything[0]["id"]

    after = alice_api.get(f"/v1/runs/{run.public_id}/messages", {"after": first_row}).json()

    assert after and all(m["id"] != first_row for m in after)
    assert after == [m for m in everything if m["id"] != first_row]
    other_run_message = Message.objects.filter(agent=demo_agent, run__isnull=True).first()
    assert (
        alice_api.get(f"/v1/runs/{run.public_id}/messages", {"after": other_run_message.public_id}).status_code == 404
    )


# --- letta-client 1.x request forms -------------------------------------------------------

CLIENT_TOOL = {
    "name": "read_local_file",
    "description": "Read a file on the caller's machine.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}


def test_a_client_tool_call_waits_and_a_tool_return_message_answers_it(alice_api, demo_agent):
    asked = send(alice_api, demo_agent, "call read_local_file with path=notes.txt", client_tools=[CLIENT_TOOL]).json()
    request = asked["messages"][-1]
    assert request["message_type"] == "approval_request_message"
    assert request["tool_call"]["name"] == "read_local_file"
    assert asked["stop_reason"]["stop_reason"] == "requires_approval"

    answered = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages",
        {
            "messages": [
                {
                    "type": "tool_return",
                    "tool_returns": [
                        {
                            "tool_call_id": request["tool_call"]["tool_call_id"],
                            "tool_return": "hello",
                            "status": "success",
                        }
                    ],
                }
            ],
            "client_tools": [CLIENT_TOOL],
        },
        format="json",
    ).json()

    tool_return = answered["messages"][0]
    assert tool_return["message_type"] == "tool_return_message"
    assert (tool_return["tool_return"], tool_return["status"]) == ("hello", "success")
    assert answered["stop_reason"]["stop_reason"] == "end_turn"


def test_tool_returns_without_a_type_are_inferred_and_wrong_ids_are_a_400(alice_api, demo_agent):
    send(alice_api, demo_agent, "call read_local_file with path=notes.txt", client_tools=[CLIENT_TOOL])

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages",
        {"messages": [{"tool_returns": [{"tool_call_id": "call-elsewhere", "tool_return": "x"}]}]},
        format="json",
    )

    assert response.status_code == 400
    assert "Invalid tool call IDs" in json.dumps(response.json())


@pytest.mark.parametrize("by", ["tool_call_id", "message_id"])
def test_the_legacy_approve_names_the_call_or_the_request_message_when_one_call_waits(alice_api, demo_agent, by):
    request = send(alice_api, demo_agent, "call get_secret_code with input_text=hi").json()["messages"][-1]
    request_id = request["tool_call"]["tool_call_id"] if by == "tool_call_id" else request["id"]

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages",
        {"messages": [{"type": "approval", "approve": True, "approval_request_id": request_id}]},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["messages"][0]["status"] == "success"


def test_the_legacy_approve_with_the_request_message_id_is_a_400_when_several_calls_wait(alice_api, demo_agent):
    demo_agent.parallel_tool_calls = True
    demo_agent.save()
    request = send(
        alice_api, demo_agent, "call get_secret_code with input_text=a and call get_secret_code with input_text=b"
    ).json()["messages"][-1]
    assert len(request["tool_calls"]) == 2

    response = alice_api.post(
        f"/v1/agents/{demo_agent.public_id}/messages",
        {"messages": [{"type": "approval", "approve": True, "approval_request_id": request["id"]}]},
        format="json",
    )

    assert response.status_code == 400


def test_include_pending_approval_gives_the_waiting_request_on_retrieve_and_list(alice_api, demo_agent):
    url = f"/v1/agents/{demo_agent.public_id}"
    assert alice_api.get(url, {"include": "agent.pending_approval"}).json()["pending_approval"] is None
    request = send(alice_api, demo_agent, "call get_secret_code with input_text=hi").json()["messages"][-1]

    retrieved = alice_api.get(f"{url}?include=agent.tools&include=agent.pending_approval").json()
    listed = alice_api.get("/v1/agents/?include=agent.pending_approval").json()
    plain = alice_api.get(url).json()

    assert retrieved["pending_approval"]["id"] == request["id"]
    assert retrieved["pending_approval"]["tool_calls"] == request["tool_calls"]
    assert listed[0]["pending_approval"]["id"] == request["id"]
    assert plain["pending_approval"] is None
    assert (plain["model"], plain["model_settings"]["parallel_tool_calls"]) == ("demo/echo-1", False)
    assert alice_api.get(url, {"include": "agent.nonsense"}).status_code == 422
