"""``GET /v1/approvals/pending``: the organization's waiting approval requests across agents (an extension)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agents import services
from tests.factories import MessageFactory, asking_for_approval

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db


def ask_for_approval(agent, call_id: str) -> None:
    asking_for_approval(agent, call_id)


def test_it_lists_the_organizations_pending_approvals_as_the_agents_pending_approval(
    cast: Cast, alice_api: APIClient
) -> None:
    agent = services.agent_create(organization=cast.org_a, name="waiting", model="demo/echo-1")
    idle = services.agent_create(organization=cast.org_a, name="idle", model="demo/echo-1")
    ask_for_approval(agent, "call-1")
    MessageFactory(agent=idle, seq=2, role="user")

    listed = alice_api.get("/v1/approvals/pending").json()
    state = alice_api.get(f"/v1/agents/{agent.public_id}", {"include": "agent.pending_approval"}).json()

    assert len(listed) == 1
    assert listed[0]["agent_id"] == agent.public_id
    assert listed[0]["agent_name"] == "waiting"
    assert listed[0]["requested_at"].endswith("Z")
    assert listed[0]["approval_request_message"] == state["pending_approval"]
    assert listed[0]["id"] == state["pending_approval"]["id"]
    assert listed[0]["approval_request_message"]["tool_calls"][0]["tool_call_id"] == "call-1"


def test_another_organization_sees_none_of_them(cast: Cast, charlie_api: APIClient) -> None:
    ask_for_approval(services.agent_create(organization=cast.org_a, name="alices", model="demo/echo-1"), "call-1")

    response = charlie_api.get("/v1/approvals/pending")

    assert (response.status_code, response.json()) == (200, [])


def test_it_needs_an_api_key(cast: Cast, client) -> None:
    assert client.get("/v1/approvals/pending").status_code == 401


def test_it_is_documented_in_the_openapi_schema(alice_api: APIClient) -> None:
    schema = alice_api.get("/v1/openapi.json").json()

    operation = schema["paths"]["/v1/approvals/pending"]["get"]
    assert operation["operationId"] == "approvals_list_pending"
    assert "extension" in operation["description"]
    item = operation["responses"]["200"]["content"]["application/json"]["schema"]["items"]["$ref"]
    assert item.endswith("/PendingApprovalOutput")
