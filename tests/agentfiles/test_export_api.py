"""``GET``/``POST /v1/agents/{id}/export``, and export → import → export."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from agents import services
from agents.conversations.services import conversation_create
from agents.models import Agent
from tests.agentfiles.test_import_api import FILES, FIXTURES, import_fixture, upload

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

# What differs between two exports of equal agents: ids of rows and the times they were made.
VOLATILE = {"created_at", "updated_at", "last_updated_by_id", "created_by_id"}


def without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [without_volatile(item) for item in value]
    return value


def export(api: APIClient, agent_id: str, **params: Any) -> dict[str, Any]:
    response = api.get(f"/v1/agents/{agent_id}/export", params)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content)


@pytest.mark.parametrize("name", FILES)
def test_export_import_export_gives_the_same_document(alice_api: APIClient, name: str) -> None:
    first_id = import_fixture(alice_api, name, append_copy_suffix="false")["agent_ids"][0]
    first = export(alice_api, first_id)

    again = upload(alice_api, json.dumps(first).encode(), append_copy_suffix="false")
    assert again.status_code == 200, again.content
    second = export(alice_api, again.json()["agent_ids"][0])

    assert without_volatile(second) == without_volatile(first)
    assert again.json()["agent_ids"][0] != first_id


def test_an_export_is_a_v2_file_with_the_agents_parts(alice_api: APIClient) -> None:
    agent_id = import_fixture(alice_api, "v2-297e8217e952_loop.af")["agent_ids"][0]

    document = export(alice_api, agent_id)

    assert set(document) == {
        "agents",
        "groups",
        "blocks",
        "files",
        "sources",
        "tools",
        "mcp_servers",
        "skills",
        "metadata",
        "created_at",
    }
    (entry,) = document["agents"]
    assert entry["id"] == "agent-0"
    assert [t["name"] for t in document["tools"]] == sorted(t["name"] for t in document["tools"])
    assert sorted(entry["tool_ids"]) == sorted(t["id"] for t in document["tools"])
    assert [b["label"] for b in document["blocks"]] == sorted(b["label"] for b in document["blocks"])
    note = next(t for t in document["tools"] if t["name"] == "note")
    assert note["source_code"].startswith("from typing import Literal, Optional")
    assert entry["in_context_message_ids"][0] == "message-0"
    assert entry["messages"][0]["role"] == "system"
    assert entry["llm_config"]["handle"] == "anthropic/claude-sonnet-4-5-20250929"


def test_secrets_leave_by_name_only(alice_api: APIClient, cast: Cast) -> None:
    agent = services.agent_create(
        organization=cast.org_a, name="keys", model="demo/echo-1", tool_env_vars={"API_KEY": "sk-very-secret"}
    )

    response = alice_api.get(f"/v1/agents/{agent.public_id}/export")

    assert b"sk-very-secret" not in response.content
    (entry,) = json.loads(response.content)["agents"]
    assert entry["secrets"] == entry["tool_exec_environment_variables"] == {"API_KEY": ""}


def test_kept_folders_and_files_are_exported_again(alice_api: APIClient) -> None:
    source = json.loads((FIXTURES / "v2-308a180244fc_void.af").read_bytes())
    agent_id = import_fixture(alice_api, "v2-308a180244fc_void.af")["agent_ids"][0]

    document = export(alice_api, agent_id)

    assert document["sources"] == source["sources"]
    assert document["files"] == source["files"]
    assert document["agents"][0]["files_agents"] == source["agents"][0]["files_agents"]


def test_scrub_messages_legacy_format_and_the_post_form(alice_api: APIClient, cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, name="plain", model="demo/echo-1")

    scrubbed = export(alice_api, agent.public_id, scrub_messages="true")
    legacy = alice_api.get(f"/v1/agents/{agent.public_id}/export?use_legacy_format=true")
    skills = [{"name": "s", "files": {"SKILL.md": "# S"}, "source_url": None}]
    posted = alice_api.post(f"/v1/agents/{agent.public_id}/export", {"skills": skills}, format="json")

    assert scrubbed["agents"][0]["messages"] == []
    assert scrubbed["agents"][0]["in_context_message_ids"] == []
    assert (legacy.status_code, legacy.json()) == (400, {"detail": "Legacy format is not supported"})
    assert posted.status_code == 200
    assert json.loads(posted.content)["skills"] == skills


def test_an_agent_made_here_round_trips(alice_api: APIClient, cast: Cast) -> None:
    agent = services.agent_create(
        organization=cast.org_a,
        name="native",
        model="demo/echo-1",
        tool_rules=[{"type": "exit_loop", "tool_name": "send_message"}],
        tool_names=["send_message"],
    )
    alice_api.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": "hi"}]}, format="json"
    )
    first = export(alice_api, agent.public_id)

    again = upload(alice_api, json.dumps(first).encode(), append_copy_suffix="false")
    second = export(alice_api, again.json()["agent_ids"][0])

    assert without_volatile(second) == without_volatile(first)
    assert Agent.objects.filter(name="native").count() == 2


def test_an_export_holds_the_agents_own_thread_and_no_conversations_rows(alice_api: APIClient, cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, name="threads", model="demo/echo-1")
    conversation = conversation_create(agent=agent, user=None)
    sent = alice_api.post(
        f"/v1/conversations/{conversation.public_id}/messages",
        {"messages": [{"role": "user", "content": "only in the conversation"}], "streaming": False},
        format="json",
    )
    assert sent.status_code == 200, sent.content

    document = export(alice_api, agent.public_id)

    texts = json.dumps(document["agents"][0]["messages"])
    assert "only in the conversation" not in texts
