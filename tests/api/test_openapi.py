"""The OpenAPI document and its docs page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from agentfiles.urls import urlpatterns as agentfile_urlpatterns
from agents.api.urls import urlpatterns
from agents.wire.resources import AgentState
from mcp_servers.api_urls import urlpatterns as mcp_urlpatterns

pytestmark = pytest.mark.django_db


def test_it_generates_a_valid_schema_without_warnings(tmp_path: Path) -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "openapi.json"))


def test_it_serves_the_schema_publicly_with_every_letta_path() -> None:
    response = APIClient().get("/v1/openapi.json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    documented = set(schema["paths"])
    patterns = [*urlpatterns, *agentfile_urlpatterns, *mcp_urlpatterns]
    routed = {
        f"/v1/{p.pattern}".replace("<str:", "{").replace(">", "}")
        for p in patterns
        if p.name and "schema" not in p.callback.initkwargs  # deprecated twins (``alias``) are served, not documented
    }
    assert routed - {"/v1/openapi.json", "/v1/docs/"} == documented
    assert "/v1/agents/{agent_id}/tools/approval/{tool_name}" in documented
    assert {"/v1/mcp-servers/", "/v1/mcp-servers/connect/{server_id}", "/v1/tools/mcp/oauth/callback"} <= documented
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_it_serves_a_docs_page_that_needs_no_cdn() -> None:
    response = APIClient().get("/v1/docs/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn.jsdelivr.net" not in page


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for path in document["paths"].values() for op in path.values()}


def test_it_types_every_answer_but_the_raw_provider_payload(document: dict[str, Any]) -> None:
    untyped = {
        operation_id
        for operation_id, operation in operations(document).items()
        for content in [operation["responses"].get("200", {}).get("content", {})]
        for media in content.values()
        if media["schema"].get("type") == "object" and not media["schema"].get("additionalProperties", {})
    }

    assert untyped == {"agents_messages_preview_raw_payload", "conversations_messages_preview_raw_payload"}


def test_it_documents_turn_requests_as_message_creates_an_approval_or_tool_returns(
    document: dict[str, Any],
) -> None:
    schemas = document["components"]["schemas"]
    senders = ["agents_messages_create", "agents_messages_create_stream", "agents_messages_create_async"]

    for operation_id in senders:
        body = operations(document)[operation_id]["requestBody"]["content"]["application/json"]["schema"]
        assert body == {"$ref": "#/components/schemas/TurnRequest"}
    messages = schemas["TurnRequest"]["properties"]["messages"]
    assert messages["nullable"] is True
    assert [ref["$ref"] for ref in messages["items"]["oneOf"]] == [
        "#/components/schemas/MessageCreate",
        "#/components/schemas/ApprovalCreate",
        "#/components/schemas/ToolReturnCreate",
    ]
    assert schemas["ToolReturnCreate"]["properties"]["tool_returns"]["items"] == {
        "$ref": "#/components/schemas/ClientToolReturn"
    }
    assert schemas["TurnRequest"]["properties"]["client_tools"]["items"] == {"$ref": "#/components/schemas/ClientTool"}
    assert schemas["TurnRequest"]["properties"]["streaming"]["type"] == "boolean"
    approval_items = schemas["ApprovalCreate"]["properties"]["approvals"]["items"]
    assert {ref["$ref"] for ref in approval_items["oneOf"]} == {
        "#/components/schemas/ApprovalItem",
        "#/components/schemas/ToolReturnItem",
    }


def test_it_documents_the_stream_as_events_and_the_blocking_answer_as_a_letta_response(
    document: dict[str, Any],
) -> None:
    by_id = operations(document)

    for operation_id in ("agents_messages_create_stream", "runs_stream"):
        assert by_id[operation_id]["responses"]["200"]["content"] == {
            "text/event-stream": {"schema": {"$ref": "#/components/schemas/LettaStreamEvent"}}
        }
    blocking = by_id["agents_messages_create"]["responses"]["200"]["content"]["application/json"]
    assert blocking["schema"] == {"$ref": "#/components/schemas/LettaResponse"}
    assert by_id["agents_messages_create_async"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Run"
    }


def test_it_documents_401_and_429_wherever_a_key_is_needed_and_422_wherever_there_is_input(
    document: dict[str, Any],
) -> None:
    by_id = operations(document)
    keyed = {operation_id for operation_id, operation in by_id.items() if operation.get("security")}
    with_input = {
        operation_id
        for operation_id, operation in by_id.items()
        if "requestBody" in operation or any(p["in"] == "query" for p in operation.get("parameters", []))
    }

    assert keyed == set(by_id) - {"health_check"}
    assert {op for op in keyed if not {"401", "429"} <= set(by_id[op]["responses"])} == set()
    assert {op for op in with_input if "422" not in by_id[op]["responses"]} == set()
    assert set(by_id["health_check"]["responses"]) == {"200"}


def test_it_documents_answers_from_the_types_the_wire_returns(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    listed = operations(document)["agents_messages_list"]["responses"]["200"]["content"]["application/json"]

    assert list(schemas["AgentState"]["properties"]) == list(AgentState.__annotations__)
    assert set(schemas["AgentState"]["required"]) == set(AgentState.__required_keys__)
    assert listed["schema"]["items"]["discriminator"]["propertyName"] == "message_type"
    assert set(listed["schema"]["items"]["discriminator"]["mapping"]) == {
        "system_message",
        "user_message",
        "reasoning_message",
        "hidden_reasoning_message",
        "assistant_message",
        "tool_call_message",
        "approval_request_message",
        "tool_return_message",
        "approval_response_message",
        "event_message",
        "summary_message",
    }
