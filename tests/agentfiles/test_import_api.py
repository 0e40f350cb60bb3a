"""``POST /v1/agents/import`` on Letta's own example agent files (``fixtures/``, from letta-ai/agent-file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from agentfiles.models import AgentFileImport
from agents.models import DEFAULT_SYSTEM_PROMPT, Agent, AgentBlock, Block, Message
from tools.models import AgentTool, Tool

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"
FILES = sorted(path.name for path in FIXTURES.glob("*.af"))


def document(name: str) -> dict[str, Any]:
    data = json.loads((FIXTURES / name).read_bytes())
    return json.loads(data) if isinstance(data, str) else data


def upload(api: APIClient, content: bytes, file_name: str = "agent.af", **fields: Any) -> Any:
    return api.post("/v1/agents/import", {"file": SimpleUploadedFile(file_name, content), **fields}, format="multipart")


def import_fixture(api: APIClient, fixture: str, **fields: Any) -> dict[str, Any]:
    response = upload(api, (FIXTURES / fixture).read_bytes(), fixture, **fields)
    assert response.status_code == 200, response.content
    return response.json()


def agent_of(answer: dict[str, Any], index: int = 0) -> Agent:
    return Agent.objects.get(pk=Agent.parse_public_id(answer["agent_ids"][index]))


def row_counts() -> dict[str, int]:
    models = (Agent, Block, AgentBlock, Message, Tool, AgentTool, AgentFileImport)
    return {model.__name__: model.objects.count() for model in models}


@pytest.mark.parametrize("name", FILES)
def test_every_example_file_imports_with_its_blocks_tools_and_rules(alice_api: APIClient, name: str) -> None:
    source = document(name)
    answer = import_fixture(alice_api, name)

    entries = source.get("agents") or [source]
    assert len(answer["agent_ids"]) == len(entries)
    for index, entry in enumerate(entries):
        agent = agent_of(answer, index)
        state = alice_api.get(f"/v1/agents/{agent.public_id}").json()
        assert state["name"] == f"{entry['name']}_copy"
        blocks = source.get("blocks") or source.get("core_memory") or []
        wanted_blocks = (
            {b["label"]: b["value"] for b in blocks if b["id"] in entry["block_ids"]}
            if "block_ids" in entry
            else {b["label"]: b["value"] for b in blocks}
        )
        assert {b["label"]: b["value"] for b in state["memory"]["blocks"]} == wanted_blocks
        assert all(b["limit"] >= len(b["value"]) for b in state["memory"]["blocks"])
        attached = {t["name"] for t in state["tools"]}
        custom = {t["name"] for t in source["tools"] if t.get("tool_type") == "custom"}
        wanted_custom = custom & {
            t["name"] for t in source["tools"] if t.get("id") in entry.get("tool_ids", [t.get("id")])
        }
        assert wanted_custom <= attached
        rules = {(r["type"], r["tool_name"]) for r in state["tool_rules"]}
        assert {(r["type"], r["tool_name"]) for r in entry["tool_rules"] if r["tool_name"] in attached} <= rules
        assert state["system"] == (entry["system"] or DEFAULT_SYSTEM_PROMPT)  # no prompt: the default one


def test_custom_tool_source_becomes_a_tool_with_its_schema_from_the_source(alice_api: APIClient) -> None:
    answer = import_fixture(alice_api, "v2-b1c2d3e4f5a6_outreach_workflow_agent.double-encoded.af")

    tool = Tool.objects.get(agents=agent_of(answer), name="send_email")
    entry = next(
        t
        for t in document("v2-b1c2d3e4f5a6_outreach_workflow_agent.double-encoded.af")["tools"]
        if t["name"] == "send_email"
    )
    assert tool.kind == "source"
    assert tool.source_code == entry["source_code"]
    assert tool.json_schema["name"] == "send_email"
    assert set(tool.json_schema["parameters"]["properties"]) == set(
        entry["json_schema"]["parameters"]["properties"]
    ) - {"request_heartbeat"}


def test_the_history_and_the_window_are_as_in_the_file(alice_api: APIClient) -> None:
    source = document("v1-0.6.47_memgpt_agent_with_convo.af")
    answer = import_fixture(alice_api, "v1-0.6.47_memgpt_agent_with_convo.af")

    agent = agent_of(answer)
    rows = list(Message.objects.filter(agent=agent).order_by("seq"))
    window = list(Message.objects.in_context(agent))
    assert len(rows) == len(source["messages"])
    assert [row.role for row in window] == [source["messages"][i]["role"] for i in source["in_context_message_indices"]]
    assert window[0].content == [{"type": "text", "text": source["system"]}]
    tool_rows = [row for row in window if row.role == "tool"]
    assert tool_rows and all(r["tool_call_id"] for row in tool_rows for r in row.tool_returns)


def test_the_imported_agent_answers(alice_api: APIClient) -> None:
    answer = import_fixture(alice_api, "v2-297e8217e952_loop.af", model="demo/echo-1")

    agent = agent_of(answer)
    reply = alice_api.post(
        f"/v1/agents/{agent.public_id}/messages", {"messages": [{"role": "user", "content": "hello"}]}, format="json"
    )

    assert reply.status_code == 200, reply.content
    assert reply.json()["stop_reason"]["stop_reason"] == "end_turn"
    assert agent.model == "demo/echo-1"


def test_letta_form_fields_rename_keep_tools_and_fill_secrets(alice_api: APIClient, cast: Cast) -> None:
    answer = import_fixture(
        alice_api,
        "v2-308a180244fc_void.af",
        name="void here",
        secrets=json.dumps({"BSKY_USERNAME": "void.bsky.social", "NOT_IN_FILE": "x"}),
        strip_messages="true",
    )

    agent = agent_of(answer)
    assert agent.name == "void here"
    assert agent.tool_env_vars == {"BSKY_PASSWORD": "", "PDS_URI": "", "BSKY_USERNAME": "void.bsky.social"}
    assert list(Message.objects.filter(agent=agent).values_list("role", flat=True)) == ["system"]
    assert answer["unresolved"]["folders"] == ["folder-1765842590288"]
    assert any("folder-1765842590288" in w for w in answer["warnings"])


def test_a_model_the_organization_cannot_use_falls_back_and_says_so(alice_api: APIClient) -> None:
    answer = import_fixture(alice_api, "v2-308a180244fc_void.af")

    assert agent_of(answer).model == "demo/echo-1"
    assert any("gemini-something/gemini-2.5-pro" in w for w in answer["warnings"])


def test_a_group_file_imports_every_agent_and_keeps_the_group(alice_api: APIClient) -> None:
    answer = import_fixture(alice_api, "v2-3e54e2fa2f7e_evie.af")

    first, second = agent_of(answer, 0), agent_of(answer, 1)
    shared = set(first.agent_blocks.values_list("block_id", flat=True)) & set(
        second.agent_blocks.values_list("block_id", flat=True)
    )
    assert shared, "blocks the file shares between its agents stay shared"
    record = AgentFileImport.objects.get()
    assert record.kept["groups"][0]["manager_config"]["manager_type"] == "sleeptime"


def test_override_existing_tools_false_keeps_the_organizations_tool(alice_api: APIClient) -> None:
    import_fixture(alice_api, "v2-b1c2d3e4f5a6_outreach_workflow_agent.double-encoded.af")
    Tool.objects.filter(name="send_email").update(description="ours")

    import_fixture(
        alice_api, "v2-b1c2d3e4f5a6_outreach_workflow_agent.double-encoded.af", override_existing_tools="false"
    )

    assert Tool.objects.get(name="send_email").description == "ours"
    assert Agent.objects.count() == 2


BAD_TOOL = {
    "agents": [{"id": "agent-0", "name": "bad", "tool_ids": ["tool-0"], "block_ids": [], "messages": []}],
    "groups": [],
    "blocks": [],
    "files": [],
    "sources": [],
    "tools": [
        {
            "id": "tool-0",
            "name": "broken",
            "tool_type": "custom",
            "source_type": "python",
            "source_code": "def broken(:",
        }
    ],
    "mcp_servers": [],
}
GOOD_THEN_BAD_TOOL = {
    **BAD_TOOL,
    "agents": [{**BAD_TOOL["agents"][0], "tool_ids": ["tool-1", "tool-0"]}],
    "blocks": [{"id": "block-0", "label": "human", "value": "x", "limit": 100}],
    "tools": [
        {
            "id": "tool-1",
            "name": "fine",
            "tool_type": "custom",
            "source_code": 'def fine(x: str) -> str:\n    """Fine.\n\n    Args:\n        x: x.\n    """\n'
            "    return x\n",
        },
        BAD_TOOL["tools"][0],
    ],
}


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b"{not json", "Corrupted agent file format: the file is not JSON"),
        ((FIXTURES / "v2-297e8217e952_loop.af").read_bytes()[:5000], "Corrupted agent file format"),
        (b'{"version": "0.5.0", "name": "x"}', "Unknown agent file version ('0.5.0')"),
        (json.dumps(BAD_TOOL).encode(), "Tool 'broken': its source does not parse"),
        (json.dumps(GOOD_THEN_BAD_TOOL).encode(), "Tool 'broken': its source does not parse"),
        (
            json.dumps({**BAD_TOOL, "agents": [{**BAD_TOOL["agents"][0], "block_ids": ["block-7"]}]}).encode(),
            "Schema validation failed: agent agent-0 references non-existent block block-7",
        ),
    ],
    ids=["not-json", "truncated", "unknown-version", "tool-source", "tool-source-after-a-good-tool", "dangling-id"],
)
def test_a_bad_file_is_a_clear_400_and_leaves_nothing(
    alice_api: APIClient, cast: Cast, content: bytes, detail: str
) -> None:
    before = row_counts()

    response = upload(alice_api, content)

    assert response.status_code == 400
    assert detail in response.json()["detail"]
    assert row_counts() == before


def test_a_file_over_the_size_limit_is_a_400_and_leaves_nothing(alice_api: APIClient, settings: Any) -> None:
    settings.AGENTFILE_MAX_BYTES = 50_000
    before = row_counts()

    response = upload(alice_api, (FIXTURES / "v2-297e8217e952_loop.af").read_bytes())

    assert response.status_code == 400
    assert response.json()["detail"] == ("The agent file is 89367 bytes, over this server's limit of 50000 bytes.")
    assert row_counts() == before


def test_a_failure_after_agents_were_made_leaves_nothing(alice_api: APIClient) -> None:
    source = document("v2-3e54e2fa2f7e_evie.af")
    source["agents"][1]["block_ids"] = source["agents"][1]["block_ids"] * 2  # the same label twice: refused
    source["blocks"].append({**source["blocks"][0], "id": "block-99"})
    source["agents"][1]["block_ids"] = [*source["agents"][1]["block_ids"][:1], "block-99"]
    before = row_counts()

    response = upload(alice_api, json.dumps(source).encode())

    assert response.status_code in (400, 422)
    assert row_counts() == before


def test_text_the_database_cannot_store_is_a_400_and_leaves_nothing(alice_api: APIClient) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite stores NUL characters; Postgres refuses them")
    source = document("v2-297e8217e952_loop.af")
    source["agents"][0]["messages"][1]["content"] = [{"type": "text", "text": "nul \u0000 here"}]
    before = row_counts()

    response = upload(alice_api, json.dumps(source).encode())

    assert response.status_code == 400
    assert response.json()["detail"].startswith("Import failed: the file holds a value this server cannot store")
    assert row_counts() == before


def test_missing_file_and_bad_secrets_are_refused(alice_api: APIClient) -> None:
    missing = alice_api.post("/v1/agents/import", {}, format="multipart")
    bad_secrets = upload(alice_api, (FIXTURES / "v2-297e8217e952_loop.af").read_bytes(), secrets="[1]")

    assert missing.status_code == 422
    assert (bad_secrets.status_code, bad_secrets.json()) == (400, {"detail": "secrets must be a valid JSON string"})


MCP_FILE = {
    "agents": [
        {
            "id": "agent-0",
            "name": "mcp user",
            "tool_ids": ["tool-0"],
            "block_ids": [],
            "messages": [],
            "llm_config": {
                "handle": "evil/model",
                "model": "model",
                "model_endpoint_type": "openai",
                "model_endpoint": "http://169.254.169.254/v1",
            },
        }
    ],
    "tools": [
        {
            "id": "tool-0",
            "name": "linear_search",
            "tool_type": "external_mcp",
            "source_code": "def linear_search(): pass",
            "tags": ["mcp:linear"],
            "metadata_": {"mcp": {"server_name": "linear", "server_id": "mcp_server-123"}},
        }
    ],
    "mcp_servers": [
        {
            "id": "mcp_server-0",
            "server_type": "sse",
            "server_name": "linear",
            "server_url": "https://mcp.linear.app/sse",
        }
    ],
    **{key: [] for key in ("groups", "blocks", "files", "sources")},
}


def test_an_mcp_server_is_kept_reported_and_exported_again(alice_api: APIClient) -> None:
    response = upload(alice_api, json.dumps(MCP_FILE).encode())

    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["unresolved"] == {"mcp_servers": ["linear"], "folders": []}
    assert any("'linear_search' comes from an MCP server" in w for w in answer["warnings"])
    assert not Tool.objects.filter(name="linear_search").exists()
    exported = json.loads(alice_api.get(f"/v1/agents/{answer['agent_ids'][0]}/export").content)
    assert exported["mcp_servers"] == MCP_FILE["mcp_servers"]


def test_a_model_endpoint_in_the_file_is_never_used(alice_api: APIClient) -> None:
    answer = upload(alice_api, json.dumps(MCP_FILE).encode()).json()

    agent = agent_of(answer)
    state = alice_api.get(f"/v1/agents/{agent.public_id}").json()
    assert agent.model == "demo/echo-1"
    assert "169.254.169.254" not in json.dumps(state)
    assert any("'evil/model' is not available" in w for w in answer["warnings"])


def test_a_block_over_its_limit_imports_with_the_limit_raised_and_says_so(alice_api: APIClient) -> None:
    source = {
        **MCP_FILE,
        "tools": [],
        "mcp_servers": [],
        "agents": [{**MCP_FILE["agents"][0], "tool_ids": [], "block_ids": ["block-0"]}],
        "blocks": [{"id": "block-0", "label": "persona", "value": "x" * 120, "limit": 100}],
    }

    answer = upload(alice_api, json.dumps(source).encode()).json()

    block = Block.objects.get(agent_blocks__agent=agent_of(answer))
    assert (block.value, block.limit) == ("x" * 120, 120)
    assert (
        "Block 'persona' holds 120 characters, over its limit of 100; the limit was raised to 120."
        in answer["warnings"]
    )
