"""The API exception handler: Letta's error bodies and status codes."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from agents import selectors, services
from agents.api.errors import exception_handler
from agents.errors import AgentBusy, InvalidToolCallIds, NoPendingApproval, PendingApprovalConflict
from agents.models import Agent, Message, Run
from tests.conftest import Cast

pytestmark = pytest.mark.django_db


def test_it_renders_the_approval_errors_with_letta_texts_and_codes() -> None:
    no_pending = exception_handler(NoPendingApproval(), {})
    conflict = exception_handler(PendingApprovalConflict("message-123"), {})
    wrong_ids = exception_handler(InvalidToolCallIds(["toolu_1"], ["x"]), {})

    assert (no_pending.status_code, no_pending.data) == (
        400,
        {
            "detail": "Cannot process approval response: No tool call is currently awaiting approval. "
            "Please send a regular message to interact with the agent."
        },
    )
    assert conflict.status_code == 409
    assert conflict.data == {
        "detail": {
            "code": "PENDING_APPROVAL",
            "message": "CONFLICT: Cannot send a new message: The agent is waiting for approval on a tool call. "
            "Please approve or deny the pending request before continuing.",
            "pending_request_id": "message-123",
        }
    }
    assert (wrong_ids.status_code, wrong_ids.data) == (
        400,
        {"detail": "Invalid tool call IDs. Expected '['toolu_1']', but received '['x']'."},
    )
    assert exception_handler(AgentBusy(), {}).status_code == 409


def test_it_answers_500_with_a_bare_detail_for_an_unexpected_error(
    alice_api: APIClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(**kwargs: object) -> list[object]:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(selectors, "agent_list", explode)

    response = alice_api.get("/v1/agents/")

    assert response.status_code == 500
    assert response.json() == {"detail": "An internal server error occurred"}
    assert "secret internals" in caplog.text
    assert "x-should-retry" not in response  # a GET may be replayed


def test_a_5xx_answered_to_a_post_or_patch_tells_the_sdk_not_to_replay_it(
    alice_api: APIClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(**kwargs: object) -> object:
        raise RuntimeError("after some writes")

    monkeypatch.setattr(services, "agent_create", explode)

    created = alice_api.post("/v1/agents/", {"name": "x"}, format="json")

    assert created.status_code == 500
    assert created["x-should-retry"] == "false"


def test_it_answers_422_for_a_body_that_is_not_json(alice_api: APIClient) -> None:
    response = alice_api.post("/v1/agents/", "{not json", content_type="application/json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body"]


def test_it_answers_405_in_letta_shape_for_a_wrong_method(alice_api: APIClient) -> None:
    response = alice_api.put("/v1/agents/", {}, format="json")

    assert response.status_code == 405
    assert response.json() == {"detail": "Method Not Allowed"}


def test_it_answers_401_with_a_bearer_challenge(cast: Cast) -> None:
    response = APIClient().get("/v1/agents/")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert set(response.json()) == {"detail"}


def test_it_answers_the_health_check_without_a_key() -> None:
    response = APIClient().get("/v1/health/")

    assert response.status_code == 200
    assert response.json() == {"version": "0.16.8", "status": "ok"}


@pytest.mark.parametrize(
    ("field", "text"),
    [("name", "bad\x00name"), ("metadata", {"note\x00": "key with a NUL"}), ("description", "half a pair \ud800")],
)
def test_it_refuses_text_the_database_cannot_store_with_a_422_naming_the_field(
    alice_api: APIClient, field: str, text: object
) -> None:
    # Postgres rejects NUL in text and jsonb, and unpaired surrogates anywhere: these were 500s.
    body = json.dumps({field: text}).encode()

    response = alice_api.post("/v1/agents/", body, content_type="application/json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][:2] == ["body", field]
    assert response.json()["detail"][0]["msg"] == "Text may not contain NUL characters or unpaired surrogates."
    assert not Agent.objects.exists()


def test_it_refuses_a_nul_in_a_query_parameter_or_a_path_with_a_422(alice_api: APIClient) -> None:
    in_query = alice_api.get("/v1/tools/", {"name": "dice\x00"})
    in_path = alice_api.patch("/v1/agents/agent-x/tools/approval/dice%00?requires_approval=true")

    assert (in_query.status_code, in_query.json()["detail"][0]["loc"]) == (422, ["query", "name"])
    assert (in_path.status_code, in_path.json()["detail"][0]["loc"]) == (422, ["path", "tool_name"])


def test_it_refuses_a_nul_in_a_message_before_creating_a_run(alice_api: APIClient, cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, name="helper", model="demo/echo-1")
    body = {"messages": [{"role": "user", "content": "hi\x00"}], "\x00": 1}

    responses = [
        alice_api.post(f"/v1/agents/{agent.public_id}/messages{suffix}", body, format="json")
        for suffix in ("", "/stream", "/async")
    ]

    assert [r.status_code for r in responses] == [422, 422, 422]
    assert not Run.objects.exists()
    assert Message.objects.filter(agent=agent, role="user").count() == 1  # the login row only
