"""The API exception handler: Letta's error bodies and status codes."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents import selectors
from agents.api.errors import exception_handler
from agents.errors import AgentBusy, InvalidToolCallIds, NoPendingApproval, PendingApprovalConflict
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


def test_it_answers_422_for_a_body_that_is_not_json(alice_api: APIClient) -> None:
    response = alice_api.post("/v1/agents/", "{not json", content_type="application/json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body"]


def test_it_answers_405_in_letta_shape_for_a_wrong_method(alice_api: APIClient) -> None:
    response = alice_api.put("/v1/agents/", {}, format="json")

    assert response.status_code == 405
    assert response.json() == {"detail": 'Method "PUT" not allowed.'}


def test_it_answers_401_with_a_bearer_challenge(cast: Cast) -> None:
    response = APIClient().get("/v1/agents/")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert set(response.json()) == {"detail"}


def test_it_answers_the_health_check_without_a_key() -> None:
    response = APIClient().get("/v1/health/")

    assert response.status_code == 200
    assert response.json() == {"version": "0.13.0", "status": "ok"}
