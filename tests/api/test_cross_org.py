"""Cross-organization probes on every ``/v1`` endpoint that takes an id, and on every list.

Charlie (org B) aims at Alice's (org A) agent, tool, runs, steps and messages:
each is a 404 with a boring body, nothing of org A changes, and no list shows
a row of org A, whatever its filters and cursors name.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from agentfiles.urls import urlpatterns as agentfile_urlpatterns
from agents import services
from agents.api.urls import urlpatterns
from agents.conversations.services import conversation_create
from agents.memory.archival import archive_passage_insert, passage_insert
from agents.memory.archives import archive_attach, archive_create
from agents.models import Agent, AgentArchive, AgentBlock, Archive, Block, Conversation, Message, Passage, Run, Step
from folders.attachments import folder_attach
from folders.models import FileAgent, FileChunk, FileMetadata, Folder, FolderAgent
from mcp_servers.api_urls import urlpatterns as mcp_urlpatterns
from mcp_servers.models import MCPOAuthSession, MCPServer
from providers.models import Provider, ProviderModel
from tests.factories import McpToolFactory
from tools.models import AgentTool, Tool
from tools.services import tool_upsert_from_source

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

TURN = {"messages": [{"role": "user", "content": "hi"}]}
ALICES_URL = "https://93.184.215.14/v1"
DICE = '''
def roll_dice(num_sides: int) -> str:
    """Roll a die.

    Args:
        num_sides: How many sides the die has.
    """
    return str(num_sides)
'''


@dataclass
class Rows:
    """Org A's rows, and Charlie's own agent (for probes that pair it with an id of org A)."""

    agent: Agent
    tool: Tool
    run: Run
    queued_run: Run
    step: Step
    message: Message
    charlies_agent: Agent
    block: Block
    passage: Passage
    provider: Provider
    conversation: Conversation
    folder: Folder
    file: FileMetadata
    charlies_folder: Folder
    mcp_server: MCPServer | None = None
    mcp_tool: Tool | None = None
    archive: Archive | None = None
    archive_passage: Passage | None = None

    def snapshot(self) -> dict[str, Any]:
        return {
            "agent": Agent.objects.filter(pk=self.agent.pk).values("name", "updated_at", "context_start_seq").first(),
            "tool": Tool.objects.filter(pk=self.tool.pk).values("description", "updated_at").first(),
            "attached": list(
                AgentTool.objects.filter(agent=self.agent).values_list(
                    "tool_id", "approval_policy", "approval_condition"
                )
            ),
            "runs": list(Run.objects.filter(agent=self.agent).order_by("pk").values_list("pk", "status")),
            "messages": Message.objects.filter(agent=self.agent).count(),
            "steps": list(Step.objects.filter(agent=self.agent).order_by("pk").values_list("pk", "feedback", "tags")),
            "charlies_tools": AgentTool.objects.filter(agent=self.charlies_agent).count(),
            "blocks": list(Block.objects.order_by("pk").values_list("pk", "label", "value", "read_only")),
            "attached_blocks": sorted(AgentBlock.objects.values_list("agent_id", "block_id")),
            "passages": list(Passage.objects.order_by("pk").values_list("pk", "text")),
            "providers": [
                (row.pk, row.name, row.base_url, row.api_key, row.status, row.checked_at)
                for row in Provider.objects.order_by("pk")
            ],
            "provider_models": ProviderModel.objects.count(),
            "mcp_servers": [
                (row.pk, row.server_name, row.server_url, row.secrets, row.last_checked_at)
                for row in MCPServer.objects.order_by("pk")
            ],
            "mcp_tools": list(Tool.objects.filter(kind="mcp").values_list("pk", "name", "updated_at")),
            "mcp_oauth_sessions": list(MCPOAuthSession.objects.values_list("pk", "status", "updated_at")),
            "conversations": list(
                Conversation.objects.order_by("pk").values_list("pk", "summary", "model", "deleted_at", "updated_at")
            ),
            "folders": list(Folder.objects.order_by("pk").values_list("pk", "name", "description", "updated_at")),
            "files": list(FileMetadata.objects.order_by("pk").values_list("pk", "file_name", "processing_status")),
            "folder_agents": sorted(FolderAgent.objects.values_list("folder_id", "agent_id")),
            "file_agents": sorted(FileAgent.objects.values_list("agent_id", "file_id", "is_open", "visible_content")),
            "chunks": FileChunk.objects.count(),
            "archives": list(Archive.objects.order_by("pk").values_list("pk", "name", "description", "updated_at")),
            "agent_archives": sorted(AgentArchive.objects.values_list("agent_id", "archive_id", "is_owner")),
        }


@pytest.fixture
def rows(cast: Cast, alice_api: APIClient) -> Rows:
    tool = tool_upsert_from_source(organization=cast.org_a, source_code=DICE)
    agent = services.agent_create(
        organization=cast.org_a, name="alices", model="demo/echo-1", tool_ids=[tool.public_id]
    )
    turn = {"messages": [{"role": "user", "content": "call roll_dice with num_sides=6"}]}
    assert alice_api.post(f"/v1/agents/{agent.public_id}/messages", turn, format="json").status_code == 200
    run = Run.objects.get(agent=agent)
    queued = Run.objects.create(organization=cast.org_a, agent=agent, background=True)
    charlies = services.agent_create(organization=cast.org_b, name="charlies", model="demo/echo-1")
    provider = Provider(organization=cast.org_a, name="alices-llm", provider_type="openai", base_url=ALICES_URL)
    provider.api_key = "sk-alices-provider-key"
    provider.save()
    mcp_server = MCPServer(organization=cast.org_a, server_name="alices-mcp", server_url=f"{ALICES_URL}/mcp")
    mcp_server.set_auth(token="sk-alices-mcp-token", custom_headers=None)
    mcp_server.save()
    folder = Folder.objects.create(organization=cast.org_a, name="alices-docs", embedding="demo/x")
    file = FileMetadata.objects.create(
        organization=cast.org_a,
        folder=folder,
        file_name="alices-docs/secret.md",
        original_file_name="secret.md",
        file_type="text/x-markdown",
        file_size=20,
        processing_status="completed",
        content="alice's filed secret",
    )
    FileChunk.objects.create(organization=cast.org_a, file=file, position=0, text="alice's filed secret")
    folder_attach(agent=agent, folder=folder)
    charlies_folder = Folder.objects.create(organization=cast.org_b, name="charlies-docs", embedding="demo/x")
    archive = archive_create(organization=cast.org_a, name="alices-archive", embedding="demo/hashed-256")
    archive_attach(agent=agent, archive=archive)
    return Rows(
        archive=archive,
        archive_passage=archive_passage_insert(archive=archive, text="alice's shared secret"),
        agent=agent,
        tool=tool,
        run=run,
        queued_run=queued,
        step=Step.objects.filter(run=run).first(),
        message=Message.objects.filter(agent=agent, role="assistant").first(),
        charlies_agent=charlies,
        block=Block.objects.get(agent_blocks__agent=agent, label="human"),
        passage=passage_insert(agent=agent, text="alice's archived secret")[0],
        provider=provider,
        mcp_server=mcp_server,
        mcp_tool=McpToolFactory(
            organization=cast.org_a,
            name="alices_mcp_tool",
            server="alices-mcp",
            metadata={"mcp": {"server_name": "alices-mcp", "server_id": mcp_server.public_id}},
        ),
        conversation=conversation_create(agent=agent, user=None, summary="alice's thread"),
        folder=folder,
        file=file,
        charlies_folder=charlies_folder,
    )


# (url name, method, path, body): every route with an id, against org A's rows.
PROBES = [
    ("agent", "get", "/v1/agents/{agent}", None),
    ("agent", "patch", "/v1/agents/{agent}", {"name": "taken"}),
    ("agent", "delete", "/v1/agents/{agent}", None),
    ("agent-tools", "get", "/v1/agents/{agent}/tools", None),
    ("agent-tool-attach", "patch", "/v1/agents/{agent}/tools/attach/{tool}", None),
    ("agent-tool-attach", "patch", "/v1/agents/{charlies_agent}/tools/attach/{tool}", None),
    ("agent-tool-detach", "patch", "/v1/agents/{agent}/tools/detach/{tool}", None),
    ("agent-tool-detach", "patch", "/v1/agents/{charlies_agent}/tools/detach/{tool}", None),
    ("agent-tool-approval", "patch", "/v1/agents/{agent}/tools/approval/roll_dice?requires_approval=true", None),
    ("agent-tool-run", "post", "/v1/agents/{agent}/tools/roll_dice/run", {"args": {"num_sides": 6}}),
    ("agent-messages", "get", "/v1/agents/{agent}/messages", None),
    ("agent-messages", "get", "/v1/agents/{charlies_agent}/messages?after={message}", None),
    ("agent-messages", "post", "/v1/agents/{agent}/messages", TURN),
    ("agent-messages-stream", "post", "/v1/agents/{agent}/messages/stream", TURN),
    ("agent-messages-async", "post", "/v1/agents/{agent}/messages/async", TURN),
    ("agent-messages-cancel", "post", "/v1/agents/{agent}/messages/cancel", {}),
    ("agent-messages-preview", "post", "/v1/agents/{agent}/messages/preview-raw-payload", TURN),
    ("agent-reset-messages", "patch", "/v1/agents/{agent}/reset-messages", None),
    ("agent-summarize", "post", "/v1/agents/{agent}/summarize", {}),
    ("agent-context", "get", "/v1/agents/{agent}/context", None),
    ("agent-core-memory", "get", "/v1/agents/{agent}/core-memory", None),
    ("agent-blocks", "get", "/v1/agents/{agent}/core-memory/blocks", None),
    ("agent-block", "get", "/v1/agents/{agent}/core-memory/blocks/human", None),
    ("agent-block", "patch", "/v1/agents/{agent}/core-memory/blocks/human", {"value": "taken"}),
    ("agent-block-attach", "patch", "/v1/agents/{agent}/core-memory/blocks/attach/{block}", None),
    ("agent-block-attach", "patch", "/v1/agents/{charlies_agent}/core-memory/blocks/attach/{block}", None),
    ("agent-block-detach", "patch", "/v1/agents/{agent}/core-memory/blocks/detach/{block}", None),
    ("agent-block-detach", "patch", "/v1/agents/{charlies_agent}/core-memory/blocks/detach/{block}", None),
    ("agent-passages", "get", "/v1/agents/{agent}/archival-memory", None),
    ("agent-passages", "get", "/v1/agents/{charlies_agent}/archival-memory?after={passage}", None),
    ("agent-passages", "post", "/v1/agents/{agent}/archival-memory", {"text": "taken"}),
    ("agent-passage-search", "get", "/v1/agents/{agent}/archival-memory/search?query=secret", None),
    ("agent-passage", "delete", "/v1/agents/{agent}/archival-memory/{passage}", None),
    ("agent-passage", "delete", "/v1/agents/{charlies_agent}/archival-memory/{passage}", None),
    ("block", "get", "/v1/blocks/{block}", None),
    ("block", "patch", "/v1/blocks/{block}", {"value": "taken"}),
    ("block", "delete", "/v1/blocks/{block}", None),
    ("block-agents", "get", "/v1/blocks/{block}/agents", None),
    ("blocks", "get", "/v1/blocks/?after={block}", None),
    ("run", "get", "/v1/runs/{run}", None),
    ("run", "delete", "/v1/runs/{queued_run}", None),
    ("run-cancel", "post", "/v1/runs/{queued_run}/cancel", None),
    ("run-messages", "get", "/v1/runs/{run}/messages", None),
    ("run-steps", "get", "/v1/runs/{run}/steps", None),
    ("run-usage", "get", "/v1/runs/{run}/usage", None),
    ("run-stream", "post", "/v1/runs/{run}/stream", {}),
    ("step", "get", "/v1/steps/{step}", None),
    ("step-feedback", "patch", "/v1/steps/{step}/feedback", {"feedback": "negative", "tags": ["taken"]}),
    ("step-metrics", "get", "/v1/steps/{step}/metrics", None),
    ("message", "get", "/v1/messages/{message}", None),
    ("conv-messages", "get", "/v1/conversations/{agent}/messages", None),
    ("conv-messages", "get", "/v1/conversations/default/messages?agent_id={agent}", None),
    ("conv-messages", "post", "/v1/conversations/{agent}/messages", TURN),
    ("conv-messages", "post", "/v1/conversations/{agent}/messages", TURN | {"streaming": False}),
    ("conv-messages-preview", "post", "/v1/conversations/{agent}/messages/preview-raw-payload", TURN),
    ("conv-cancel", "post", "/v1/conversations/{agent}/cancel", None),
    ("conv-cancel", "post", "/v1/conversations/default/cancel?agent_id={agent}", None),
    ("conv-stream", "post", "/v1/conversations/{agent}/stream", {}),
    ("conv-compact", "post", "/v1/conversations/{agent}/compact", {}),
    ("conv-recompile", "post", "/v1/conversations/{agent}/recompile", {}),
    ("conv-fork", "post", "/v1/conversations/{conversation}/fork", None),
    ("conv-fork", "post", "/v1/conversations/{agent}/fork", None),
    ("conv-fork", "post", "/v1/conversations/default/fork?agent_id={agent}", None),
    ("conv-messages", "get", "/v1/conversations/{conversation}/messages", None),
    ("conv-messages", "post", "/v1/conversations/{conversation}/messages", TURN | {"streaming": False}),
    ("conv-messages-preview", "post", "/v1/conversations/{conversation}/messages/preview-raw-payload", TURN),
    ("conv-cancel", "post", "/v1/conversations/{conversation}/cancel", None),
    ("conv-stream", "post", "/v1/conversations/{conversation}/stream", {}),
    ("conv-compact", "post", "/v1/conversations/{conversation}/compact", {}),
    ("conv-recompile", "post", "/v1/conversations/{conversation}/recompile", {}),
    ("conversation", "get", "/v1/conversations/{conversation}", None),
    ("conversation", "patch", "/v1/conversations/{conversation}", {"summary": "taken"}),
    ("conversation", "delete", "/v1/conversations/{conversation}", None),
    ("conversations", "get", "/v1/conversations/?agent_id={agent}", None),
    ("conversations", "get", "/v1/conversations/?after={conversation}", None),
    ("conversations", "post", "/v1/conversations/?agent_id={agent}", {"summary": "taken"}),
    ("tool", "get", "/v1/tools/{tool}", None),
    ("tool", "patch", "/v1/tools/{tool}", {"description": "taken"}),
    ("tool", "delete", "/v1/tools/{tool}", None),
    ("agents", "get", "/v1/agents/?after={agent}", None),
    ("tools", "get", "/v1/tools/?before={tool}", None),
    ("runs", "get", "/v1/runs/?after={run}", None),
    # letta-client 1.x's forms and parameters.
    ("agent", "get", "/v1/agents/{agent}?include=agent.pending_approval&include=agent.tools", None),
    ("agent-tools", "get", "/v1/agents/{charlies_agent}/tools?after={tool}&limit=1", None),
    ("agent-tool-approval", "patch", "/v1/agents/{agent}/tools/approval/roll_dice", {"requires_approval": True}),
    ("agent-reset-messages", "patch", "/v1/agents/{agent}/reset-messages", {"add_default_initial_messages": True}),
    ("agent-messages", "post", "/v1/agents/{agent}/messages", TURN | {"streaming": True}),
    ("agent-messages", "post", "/v1/agents/{agent}/messages", {"input": "hi", "streaming": True, "background": True}),
    (
        "agent-messages",
        "post",
        "/v1/agents/{agent}/messages",
        {"messages": [{"type": "tool_return", "tool_returns": [{"tool_call_id": "call-1", "tool_return": "x"}]}]},
    ),
    ("run-messages", "get", "/v1/runs/{run}/messages?after={message}&order=desc", None),
    ("run-steps", "get", "/v1/runs/{run}/steps?after={step}&order=desc", None),
    ("steps", "get", "/v1/steps/?after={step}", None),
    ("runs", "get", "/v1/runs/?before={run}&order=asc&order_by=created_at", None),
    # Models and providers: another organization's provider is a 404 before anything calls it.
    ("provider", "get", "/v1/providers/{provider}", None),
    ("provider", "patch", "/v1/providers/{provider}", {"api_key": "sk-taken", "base_url": "https://example.com/v1"}),
    ("provider", "delete", "/v1/providers/{provider}", None),
    ("provider-check", "post", "/v1/providers/{provider}/check", None),
    ("provider-refresh", "patch", "/v1/providers/{provider}/refresh", None),
    ("providers", "get", "/v1/providers/?after={provider}", None),
    ("providers", "get", "/v1/providers?before={provider}&order=asc", None),
    ("mcp-server", "get", "/v1/mcp-servers/{mcp_server}", None),
    ("mcp-server", "patch", "/v1/mcp-servers/{mcp_server}", {"config": {"server_url": f"{ALICES_URL}/other"}}),
    ("mcp-server", "delete", "/v1/mcp-servers/{mcp_server}", None),
    ("mcp-server-connect", "get", "/v1/mcp-servers/connect/{mcp_server}", None),
    ("mcp-server-tools", "get", "/v1/mcp-servers/{mcp_server}/tools", None),
    ("mcp-server-tool", "get", "/v1/mcp-servers/{mcp_server}/tools/{mcp_tool}", None),
    ("mcp-server-tool-run", "post", "/v1/mcp-servers/{mcp_server}/tools/{mcp_tool}/run", {"args": {}}),
    ("mcp-server-refresh", "patch", "/v1/mcp-servers/{mcp_server}/refresh", None),
    ("mcp-legacy-server", "patch", "/v1/tools/mcp/servers/{mcp_server_name}", {"server_url": f"{ALICES_URL}/x"}),
    ("mcp-legacy-server", "delete", "/v1/tools/mcp/servers/{mcp_server_name}", None),
    ("mcp-legacy-server-tools", "get", "/v1/tools/mcp/servers/{mcp_server_name}/tools", None),
    ("mcp-legacy-server-tools", "post", "/v1/tools/mcp/servers/{mcp_server_name}/tools", None),
    ("mcp-legacy-resync", "post", "/v1/tools/mcp/servers/{mcp_server_name}/resync", None),
    (
        "mcp-legacy-execute",
        "post",
        "/v1/tools/mcp/servers/{mcp_server_name}/tools/alices_mcp_tool/execute",
        {"args": {}},
    ),
    ("mcp-legacy-register", "post", "/v1/tools/mcp/servers/{mcp_server_name}/alices_mcp_tool", None),
    ("agent-recompile", "post", "/v1/agents/{agent}/recompile", None),
    # Agent files: another organization's agent is never exported.
    ("agent-export", "get", "/v1/agents/{agent}/export", None),
    ("agent-export", "post", "/v1/agents/{agent}/export", {"skills": []}),
    # Folders and files, and their /v1/sources twins: another organization's folder, file or agent is a 404.
    ("folders", "get", "/v1/folders/?after={folder}", None),
    ("folder", "get", "/v1/folders/{folder}", None),
    ("folder", "patch", "/v1/folders/{folder}", {"name": "taken"}),
    ("folder", "delete", "/v1/folders/{folder}", None),
    ("folder-by-name", "get", "/v1/folders/name/{folder_name}", None),
    ("folder-agents", "get", "/v1/folders/{folder}/agents", None),
    ("folder-passages", "get", "/v1/folders/{folder}/passages", None),
    ("folder-upload", "post", "/v1/folders/{folder}/upload", {}),
    ("folder-files", "get", "/v1/folders/{folder}/files?include_content=true", None),
    ("folder-files", "get", "/v1/folders/{charlies_folder}/files?after={file}", None),
    ("folder-file", "get", "/v1/folders/{folder}/files/{file}?include_content=true", None),
    ("folder-file", "get", "/v1/folders/{charlies_folder}/files/{file}?include_content=true", None),
    ("folder-file-delete", "delete", "/v1/folders/{folder}/{file}", None),
    ("folder-file-delete", "delete", "/v1/folders/{charlies_folder}/{file}", None),
    ("agent-folders", "get", "/v1/agents/{agent}/folders", None),
    ("agent-folder-attach", "patch", "/v1/agents/{agent}/folders/attach/{folder}", None),
    ("agent-folder-attach", "patch", "/v1/agents/{charlies_agent}/folders/attach/{folder}", None),
    ("agent-folder-detach", "patch", "/v1/agents/{agent}/folders/detach/{folder}", None),
    ("agent-folder-detach", "patch", "/v1/agents/{charlies_agent}/folders/detach/{folder}", None),
    ("agent-files", "get", "/v1/agents/{agent}/files", None),
    ("agent-files", "get", "/v1/agents/{charlies_agent}/files?after={file}", None),
    ("agent-files-close-all", "patch", "/v1/agents/{agent}/files/close-all", None),
    ("agent-file-open", "patch", "/v1/agents/{agent}/files/{file}/open", None),
    ("agent-file-open", "patch", "/v1/agents/{charlies_agent}/files/{file}/open", None),
    ("agent-file-close", "patch", "/v1/agents/{agent}/files/{file}/close", None),
    ("agent-file-close", "patch", "/v1/agents/{charlies_agent}/files/{file}/close", None),
    ("sources", "get", "/v1/sources/?after={folder}", None),
    ("source", "get", "/v1/sources/{folder}", None),
    ("source", "patch", "/v1/sources/{folder}", {"name": "taken"}),
    ("source", "delete", "/v1/sources/{folder}", None),
    ("source-by-name", "get", "/v1/sources/name/{folder_name}", None),
    ("source-agents", "get", "/v1/sources/{folder}/agents", None),
    ("source-passages", "get", "/v1/sources/{folder}/passages", None),
    ("source-upload", "post", "/v1/sources/{folder}/upload", {}),
    ("source-files", "get", "/v1/sources/{folder}/files", None),
    ("source-file", "get", "/v1/sources/{folder}/files/{file}", None),
    ("source-file-delete", "delete", "/v1/sources/{folder}/{file}", None),
    ("agent-sources", "get", "/v1/agents/{agent}/sources", None),
    ("agent-source-attach", "patch", "/v1/agents/{agent}/sources/attach/{folder}", None),
    ("agent-source-attach", "patch", "/v1/agents/{charlies_agent}/sources/attach/{folder}", None),
    ("agent-source-detach", "patch", "/v1/agents/{agent}/sources/detach/{folder}", None),
    ("agent-source-detach", "patch", "/v1/agents/{charlies_agent}/sources/detach/{folder}", None),
    # Shared archives: another organization's archive is a 404, also to attach to an own agent.
    ("archives", "get", "/v1/archives/?after={archive}", None),
    ("archives", "get", "/v1/archives/?agent_id={agent}", None),
    ("archive", "get", "/v1/archives/{archive}", None),
    ("archive", "patch", "/v1/archives/{archive}", {"name": "taken"}),
    ("archive", "delete", "/v1/archives/{archive}", None),
    ("archive-agents", "get", "/v1/archives/{archive}/agents", None),
    ("archive-passages", "post", "/v1/archives/{archive}/passages", {"text": "taken"}),
    ("archive-passages-batch", "post", "/v1/archives/{archive}/passages/batch", {"passages": [{"text": "taken"}]}),
    ("archive-passage", "delete", "/v1/archives/{archive}/passages/{archive_passage}", None),
    ("agent-archive-attach", "patch", "/v1/agents/{agent}/archives/attach/{archive}", None),
    ("agent-archive-attach", "patch", "/v1/agents/{charlies_agent}/archives/attach/{archive}", None),
    ("agent-archive-detach", "patch", "/v1/agents/{agent}/archives/detach/{archive}", None),
    ("agent-archive-detach", "patch", "/v1/agents/{charlies_agent}/archives/detach/{archive}", None),
]


def _ids(rows: Rows) -> dict[str, str]:
    names = (
        "agent",
        "tool",
        "run",
        "queued_run",
        "step",
        "message",
        "charlies_agent",
        "block",
        "passage",
        "provider",
        "conversation",
        "folder",
        "file",
        "charlies_folder",
    )
    ids = {name: getattr(rows, name).public_id for name in names}
    assert rows.mcp_server is not None and rows.mcp_tool is not None
    ids |= {"mcp_server": rows.mcp_server.public_id, "mcp_tool": rows.mcp_tool.public_id}
    assert rows.archive is not None and rows.archive_passage is not None
    ids |= {"archive": rows.archive.public_id, "archive_passage": rows.archive_passage.public_id}
    return ids | {"mcp_server_name": rows.mcp_server.server_name, "folder_name": rows.folder.name}


def _ghosts(ids: dict[str, str]) -> dict[str, str]:
    """The same ids of org A, each replaced by an id of its kind that names no row at all."""
    return {
        name: value if name.startswith("charlies_") else f"{value.split('-')[0]}-{uuid.uuid4()}"
        for name, value in ids.items()
    }


def _url(template: str, rows: Rows) -> str:
    return template.format(**_ids(rows))


@pytest.mark.parametrize(("name", "method", "path", "body"), PROBES, ids=[f"{m} {p}" for _, m, p, _ in PROBES])
def test_it_rejects_other_org(
    charlie_api: APIClient, rows: Rows, name: str, method: str, path: str, body: dict[str, Any] | None
) -> None:
    ids, ghosts = _ids(rows), _ghosts(_ids(rows))
    before = rows.snapshot()

    response = getattr(charlie_api, method)(path.format(**ids), body, format="json")
    nothing_there = getattr(charlie_api, method)(path.format(**ghosts), body, format="json")

    assert response.status_code == 404
    # Indistinguishable from an id that names nothing: the id itself is all that differs.
    unmasked = nothing_there.content.decode()
    for name, ghost in ghosts.items():
        unmasked = unmasked.replace(ghost, ids[name])
    assert (nothing_there.status_code, unmasked) == (404, response.content.decode())
    assert rows.snapshot() == before


def test_every_route_with_an_id_has_an_other_org_probe() -> None:
    with_ids = {
        (pattern.name, method)
        for pattern in [*urlpatterns, *mcp_urlpatterns, *agentfile_urlpatterns]
        if pattern.name and "<str:" in str(pattern.pattern)
        for method in pattern.callback.view_class.http_method_names
        if method not in ("options", "head") and hasattr(pattern.callback.view_class, method)
    }

    probed = {(name, method) for name, method, path, _ in PROBES if "{" in path.partition("?")[0]}

    assert with_ids == probed


def test_cancelling_another_orgs_run_by_id_on_an_own_agent_cancels_nothing(charlie_api: APIClient, rows: Rows) -> None:
    response = charlie_api.post(
        f"/v1/agents/{rows.charlies_agent.public_id}/messages/cancel",
        {"run_ids": [rows.queued_run.public_id]},
        format="json",
    )

    assert response.json() == {}
    rows.queued_run.refresh_from_db()
    assert rows.queued_run.status == "queued"


def test_an_import_never_touches_another_orgs_tool_of_the_same_name(charlie_api: APIClient, rows: Rows) -> None:
    file = {
        "agents": [{"id": "agent-0", "name": "charlies", "tool_ids": ["tool-0"], "block_ids": [], "messages": []}],
        "tools": [{"id": "tool-0", "name": "roll_dice", "tool_type": "custom", "source_code": DICE + "# Charlie's"}],
        **{key: [] for key in ("groups", "blocks", "files", "sources", "mcp_servers")},
    }
    before = rows.snapshot()

    response = charlie_api.post(
        "/v1/agents/import",
        {"file": SimpleUploadedFile("charlie.af", json.dumps(file).encode())},
        format="multipart",
    )

    assert response.status_code == 200, response.content
    assert rows.snapshot() == before
    charlies = Tool.objects.get(organization=rows.charlies_agent.organization, name="roll_dice")
    assert charlies.pk != rows.tool.pk
    assert charlies.source_code.endswith("# Charlie's")
    assert Tool.objects.get(pk=rows.tool.pk).source_code == DICE


@pytest.mark.parametrize(
    "path",
    [
        "/v1/agents/",
        "/v1/agents/?name=alices",
        "/v1/agents/?query_text=alice",
        "/v1/tools/",
        "/v1/tools/?name=roll_dice",
        "/v1/tools/?tool_ids={tool}",
        "/v1/runs/",
        "/v1/runs/?agent_id={agent}",
        "/v1/runs/?agent_ids={agent}&active=true",
        "/v1/runs/active",
        "/v1/runs/?statuses=completed&statuses=created&order=asc",
        "/v1/agents/?include=agent.pending_approval&order=asc&limit=5",
        "/v1/agents/{charlies_agent}/tools?limit=1&order=desc",
        "/v1/steps/",
        "/v1/steps/?agent_id={agent}",
        "/v1/agents/{charlies_agent}/tools",
        "/v1/agents/{charlies_agent}/messages",
        "/v1/blocks/",
        "/v1/blocks/?label=human&value_search=a",
        "/v1/agents/{charlies_agent}/core-memory/blocks",
        "/v1/agents/{charlies_agent}/archival-memory",
        "/v1/approvals/pending",
        "/v1/providers/",
        "/v1/providers?name=alices-llm",
        "/v1/providers?provider_type=openai&order=asc",
        "/v1/mcp-servers/",
        "/v1/conversations/",
        "/v1/conversations/?summary_search=alice&order_by=last_message_at",
        "/v1/folders/",
        "/v1/folders/?name=alices-docs",
        "/v1/sources/",
        "/v1/agents/{charlies_agent}/folders",
        "/v1/agents/{charlies_agent}/sources",
        "/v1/folders/{charlies_folder}/files",
        "/v1/archives/",
        "/v1/archives/?name=alices-archive",
        "/v1/messages/",
        "/v1/messages/?conversation_id={conversation}&order=asc",
        "/v1/steps/?feedback=positive&has_feedback=true",
        "/v1/agents/{charlies_agent}/archival-memory?limit=1000",
    ],
)
def test_lists_never_show_another_orgs_rows(charlie_api: APIClient, rows: Rows, path: str) -> None:
    charlie_api.post(f"/v1/agents/{rows.charlies_agent.public_id}/messages", TURN, format="json")
    org_a_ids = {
        rows.agent.public_id,
        rows.tool.public_id,
        rows.run.public_id,
        rows.queued_run.public_id,
        rows.step.public_id,
        rows.conversation.public_id,
        *(message.public_id for message in Message.objects.filter(agent=rows.agent)),
        *(block.public_id for block in Block.objects.filter(organization=rows.agent.organization)),
        *(passage.public_id for passage in Passage.objects.filter(organization=rows.agent.organization)),
        *(archive.public_id for archive in Archive.objects.filter(organization=rows.agent.organization)),
        rows.provider.public_id,
        *(server.public_id for server in MCPServer.objects.filter(organization=rows.agent.organization)),
        rows.folder.public_id,
        rows.file.public_id,
    }

    response = charlie_api.get(_url(path, rows))

    assert response.status_code == 200
    listed = {item["id"] for item in response.json()}
    assert listed.isdisjoint(org_a_ids)


def test_another_orgs_provider_and_its_models_are_not_listed_usable_or_given_away_by_name(
    charlie_api: APIClient, rows: Rows, settings: Any
) -> None:
    settings.PROVIDER_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    ProviderModel.objects.create(provider=rows.provider, name="gpt-4o-mini", context_window=128_000)
    Provider.objects.filter(pk=rows.provider.pk).update(status="available", checked_at=timezone.now())
    before = rows.snapshot()

    answers = {
        "models": charlie_api.get("/v1/models/"),
        "by_name": charlie_api.get("/v1/models/?provider_name=alices-llm"),
        "embedding": charlie_api.get("/v1/models/embedding"),
        "create_agent": charlie_api.post(
            "/v1/agents/", {"name": "x", "model": "alices-llm/gpt-4o-mini"}, format="json"
        ),
        "switch_model": charlie_api.patch(
            f"/v1/agents/{rows.charlies_agent.public_id}", {"model": "alices-llm/gpt-4o-mini"}, format="json"
        ),
        "same_name": charlie_api.post(
            "/v1/providers",
            {"name": "alices-llm", "provider_type": "vllm", "api_key": "", "base_url": "http://127.0.0.1:9/v1"},
            format="json",
        ),
    }

    assert "alices-llm/" not in answers["models"].content.decode() + answers["embedding"].content.decode()
    assert answers["by_name"].json() == []
    assert answers["create_agent"].status_code == answers["switch_model"].status_code == 400
    assert answers["same_name"].status_code == 200
    assert answers["same_name"].json()["organization_id"] == rows.charlies_agent.organization.public_id
    assert all("sk-alices-provider-key" not in answer.content.decode() for answer in answers.values())
    Provider.objects.filter(organization=rows.charlies_agent.organization).delete()
    assert rows.snapshot() == before
    assert Agent.objects.get(pk=rows.charlies_agent.pk).model == "demo/echo-1"


@pytest.mark.parametrize(
    "body",
    [{"agent_id": "{agent}", "query": "secret"}, {"archive_id": "{archive}"}, {"archive_id": "{archive}", "tags": []}],
)
def test_passage_search_with_another_orgs_agent_or_archive_is_a_404(
    charlie_api: APIClient, rows: Rows, body: dict[str, Any]
) -> None:
    ids = _ids(rows)
    aimed = {key: value.format(**ids) if isinstance(value, str) else value for key, value in body.items()}

    response = charlie_api.post("/v1/passages/search", aimed, format="json")

    assert response.status_code == 404
    assert "alice" not in response.content.decode()


def test_passage_search_of_the_whole_organization_never_finds_another_orgs_passages(
    charlie_api: APIClient, rows: Rows
) -> None:
    passage_insert(agent=rows.charlies_agent, text="charlie's own secret")

    hits = charlie_api.post("/v1/passages/search", {"query": "secret"}, format="json").json()

    assert [hit["passage"]["text"] for hit in hits] == ["charlie's own secret"]


def test_message_search_never_finds_another_orgs_messages_and_their_agent_is_a_404(
    charlie_api: APIClient, rows: Rows
) -> None:
    everywhere = charlie_api.post("/v1/messages/search", {"query": "roll_dice"}, format="json")
    aimed = charlie_api.post("/v1/messages/search", {"query": "dice", "agent_id": rows.agent.public_id}, format="json")
    in_thread = charlie_api.post(
        "/v1/messages/search", {"query": "dice", "conversation_id": rows.conversation.public_id}, format="json"
    )

    assert everywhere.status_code == 200 and everywhere.json() == []
    assert aimed.status_code == 404
    assert in_thread.json() == []
