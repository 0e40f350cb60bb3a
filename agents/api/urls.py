"""``/v1`` routes, with Letta's paths.

``letta-client`` calls some paths with a trailing slash (``v1/agents/``, ``v1/tools/``)
and most without (``v1/agents/{id}``). Each route answers both forms, since an
``APPEND_SLASH`` redirect would lose a POST body; the form the SDK uses is the
canonical one, and only it appears in the OpenAPI schema.

A fixed word (``agents/count``, ``tools/search``) comes before the route that takes an id
in its place, so it is never taken for one; Letta's fixed words this server does not
serve answer 404 ``Not Found`` like any unknown path (``config/urls.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.urls import path, re_path

from agents.api import (
    agents,
    approvals,
    archives,
    blocks,
    conversations,
    messages,
    passages,
    schema,
    summarize,
    tool_runs,
    tools,
    views,
)
from agents.api import folders as folder_views
from agents.api import models as model_views
from agents.api import providers as provider_views
from agents.api import recompile as recompile_views
from agents.api import runs as run_views
from agents.api import steps as step_views
from agents.api import tags as tag_views
from agents.api.messages_list import MessageDetailView, MessageSearchView, OrganizationMessagesView

if TYPE_CHECKING:
    from django.urls import URLPattern
    from rest_framework.views import APIView

app_name = "api"


def route(canonical: str, view: type[APIView], name: str) -> list[URLPattern]:
    """``canonical`` (as the SDK sends it) and the same path with/without the trailing slash."""
    alternate = canonical.removesuffix("/") if canonical.endswith("/") else f"{canonical}/"
    return [
        path(canonical, view.as_view(), name=name),
        path(alternate, view.as_view(schema=None)),
    ]


def alias(canonical: str, view: type[APIView], name: str) -> list[URLPattern]:
    """A deprecated twin (``/v1/sources``): both slash forms, neither in the OpenAPI schema."""
    alternate = canonical.removesuffix("/") if canonical.endswith("/") else f"{canonical}/"
    return [path(canonical, view.as_view(schema=None), name=name), path(alternate, view.as_view(schema=None))]


# --- folders and files (agents/api/folders.py); /v1/sources are the 0.1.x twins ---
F = "folders/<str:folder_id>"
S = "sources/<str:folder_id>"
A = "agents/<str:agent_id>"

FOLDER_ROUTES = [
    *route("folders/", folder_views.FolderListView, "folders"),
    *route("folders/count", folder_views.FolderCountView, "folders-count"),
    *route("folders/metadata", folder_views.FolderMetadataView, "folders-metadata"),
    *route("folders/name/<str:folder_name>", folder_views.FolderByNameView, "folder-by-name"),
    *route(F, folder_views.FolderDetailView, "folder"),
    *route(f"{F}/agents", folder_views.FolderAgentsView, "folder-agents"),
    *route(f"{F}/passages", folder_views.FolderPassagesView, "folder-passages"),
    *route(f"{F}/upload", folder_views.FolderUploadView, "folder-upload"),
    *route(f"{F}/files", folder_views.FolderFileListView, "folder-files"),
    *route(f"{F}/files/<str:file_id>", folder_views.FolderFileDetailView, "folder-file"),
    *route(f"{F}/<str:file_id>", folder_views.FolderFileDeleteView, "folder-file-delete"),
    *route(f"{A}/folders", folder_views.AgentFolderListView, "agent-folders"),
    *route(f"{A}/folders/attach/<str:folder_id>", folder_views.AgentFolderAttachView, "agent-folder-attach"),
    *route(f"{A}/folders/detach/<str:folder_id>", folder_views.AgentFolderDetachView, "agent-folder-detach"),
    *route(f"{A}/files", folder_views.AgentFileListView, "agent-files"),
    *route(f"{A}/files/close-all", folder_views.AgentFileCloseAllView, "agent-files-close-all"),
    *route(f"{A}/files/<str:file_id>/open", folder_views.AgentFileOpenView, "agent-file-open"),
    *route(f"{A}/files/<str:file_id>/close", folder_views.AgentFileCloseView, "agent-file-close"),
    # --- /v1/sources: the 0.1.x twins ---
    *alias("sources/", folder_views.SourceListView, "sources"),
    *alias("sources/count", folder_views.FolderCountView, "sources-count"),
    *alias("sources/metadata", folder_views.FolderMetadataView, "sources-metadata"),
    *alias("sources/name/<str:folder_name>", folder_views.FolderByNameView, "source-by-name"),
    *alias(S, folder_views.SourceDetailView, "source"),
    *alias(f"{S}/agents", folder_views.FolderAgentsView, "source-agents"),
    *alias(f"{S}/passages", folder_views.FolderPassagesView, "source-passages"),
    *alias(f"{S}/upload", folder_views.FolderUploadView, "source-upload"),
    *alias(f"{S}/files", folder_views.FolderFileListView, "source-files"),
    *alias(f"{S}/files/<str:file_id>", folder_views.FolderFileDetailView, "source-file"),
    *alias(f"{S}/<str:file_id>", folder_views.FolderFileDeleteView, "source-file-delete"),
    *alias(f"{A}/sources", folder_views.AgentFolderListView, "agent-sources"),
    *alias(f"{A}/sources/attach/<str:folder_id>", folder_views.SourceAttachView, "agent-source-attach"),
    *alias(f"{A}/sources/detach/<str:folder_id>", folder_views.SourceDetachView, "agent-source-detach"),
]


urlpatterns = [
    *route("health/", views.HealthView, "health"),
    path("openapi.json", schema.SchemaView.as_view(), name="schema"),
    path("docs/", schema.DocsView.as_view(), name="docs"),
    *route("agents/", agents.AgentListView, "agents"),
    *route("agents/count", agents.AgentCountView, "agents-count"),
    re_path(r"^agents/search/?$", views.not_found),
    *route("agents/<str:agent_id>", agents.AgentDetailView, "agent"),
    *route("agents/<str:agent_id>/tools", agents.AgentToolListView, "agent-tools"),
    *route("agents/<str:agent_id>/tools/attach/<str:tool_id>", agents.AgentToolAttachView, "agent-tool-attach"),
    *route("agents/<str:agent_id>/tools/detach/<str:tool_id>", agents.AgentToolDetachView, "agent-tool-detach"),
    *route("agents/<str:agent_id>/tools/approval/<str:tool_name>", agents.AgentToolApprovalView, "agent-tool-approval"),
    *route("agents/<str:agent_id>/tools/<str:tool_name>/run", tool_runs.AgentToolRunView, "agent-tool-run"),
    *route("agents/<str:agent_id>/messages", messages.AgentMessagesView, "agent-messages"),
    *route("agents/<str:agent_id>/messages/stream", messages.AgentMessagesStreamView, "agent-messages-stream"),
    *route("agents/<str:agent_id>/messages/async", messages.AgentMessagesAsyncView, "agent-messages-async"),
    *route("agents/<str:agent_id>/messages/cancel", messages.AgentMessagesCancelView, "agent-messages-cancel"),
    *route(
        "agents/<str:agent_id>/messages/preview-raw-payload",
        messages.AgentPreviewPayloadView,
        "agent-messages-preview",
    ),
    *route("agents/<str:agent_id>/reset-messages", messages.AgentResetMessagesView, "agent-reset-messages"),
    *route("agents/<str:agent_id>/summarize", summarize.AgentSummarizeView, "agent-summarize"),
    *route("agents/<str:agent_id>/context", messages.AgentContextView, "agent-context"),
    *route("agents/<str:agent_id>/recompile", recompile_views.AgentRecompileView, "agent-recompile"),
    path("agents/<str:agent_id>/system-prompt/recompile", recompile_views.AgentRecompileView.as_view(schema=None)),
    # --- memory: core memory blocks and archival passages ---
    *route("agents/<str:agent_id>/core-memory", blocks.AgentCoreMemoryView, "agent-core-memory"),
    *route("agents/<str:agent_id>/core-memory/blocks", blocks.AgentBlockListView, "agent-blocks"),
    *route(
        "agents/<str:agent_id>/core-memory/blocks/attach/<str:block_id>",
        blocks.AgentBlockAttachView,
        "agent-block-attach",
    ),
    *route(
        "agents/<str:agent_id>/core-memory/blocks/detach/<str:block_id>",
        blocks.AgentBlockDetachView,
        "agent-block-detach",
    ),
    *route("agents/<str:agent_id>/core-memory/blocks/<str:block_label>", blocks.AgentBlockDetailView, "agent-block"),
    *route("agents/<str:agent_id>/archival-memory", passages.AgentPassageListView, "agent-passages"),
    *route("agents/<str:agent_id>/archival-memory/search", passages.AgentPassageSearchView, "agent-passage-search"),
    *route("agents/<str:agent_id>/archival-memory/<str:passage_id>", passages.AgentPassageDetailView, "agent-passage"),
    *route(f"{A}/archives/attach/<str:archive_id>", archives.AgentArchiveAttachView, "agent-archive-attach"),
    *route(f"{A}/archives/detach/<str:archive_id>", archives.AgentArchiveDetachView, "agent-archive-detach"),
    *route("archives/", archives.ArchiveListView, "archives"),
    *route("archives/<str:archive_id>", archives.ArchiveDetailView, "archive"),
    *route("archives/<str:archive_id>/agents", archives.ArchiveAgentsView, "archive-agents"),
    *route("archives/<str:archive_id>/passages", archives.ArchivePassagesView, "archive-passages"),
    *route("archives/<str:archive_id>/passages/batch", archives.ArchivePassagesBatchView, "archive-passages-batch"),
    *route("archives/<str:archive_id>/passages/<str:passage_id>", archives.ArchivePassageDetailView, "archive-passage"),
    *route("passages/search", archives.PassageSearchView, "passages-search"),
    *route("blocks/", blocks.BlockListView, "blocks"),
    *route("blocks/count", blocks.BlockCountView, "blocks-count"),
    *route("blocks/<str:block_id>", blocks.BlockDetailView, "block"),
    *route("blocks/<str:block_id>/agents", blocks.BlockAgentsView, "block-agents"),
    # --- end of memory ---
    # --- conversations: an agent's default thread (``default`` + ``agent_id``, or ``agent-…``) ---
    *route("conversations/", conversations.ConversationsView, "conversations"),
    *route("conversations/<str:conversation_id>", conversations.ConversationView, "conversation"),
    *route("conversations/<str:conversation_id>/messages", conversations.ConversationMessagesView, "conv-messages"),
    *route(
        "conversations/<str:conversation_id>/messages/preview-raw-payload",
        conversations.ConversationPreviewView,
        "conv-messages-preview",
    ),
    *route("conversations/<str:conversation_id>/cancel", conversations.ConversationCancelView, "conv-cancel"),
    *route("conversations/<str:conversation_id>/fork", conversations.ConversationForkView, "conv-fork"),
    *route("conversations/<str:conversation_id>/stream", conversations.ConversationStreamView, "conv-stream"),
    *route("conversations/<str:conversation_id>/compact", conversations.ConversationCompactView, "conv-compact"),
    *route("conversations/<str:conversation_id>/recompile", conversations.ConversationRecompileView, "conv-recompile"),
    *route("approvals/pending", approvals.PendingApprovalListView, "approvals-pending"),
    # --- models and providers ---
    *route("messages/", OrganizationMessagesView, "messages"),
    *route("messages/search", MessageSearchView, "messages-search"),
    *route("messages/<str:message_id>", MessageDetailView, "message"),
    *route("models/", model_views.ModelListView, "models"),
    *route("models/embedding", model_views.EmbeddingModelListView, "models-embedding"),
    *route("providers/", provider_views.ProviderListView, "providers"),
    *route("providers/check", provider_views.ProviderCheckView, "providers-check"),
    *route("providers/<str:provider_id>", provider_views.ProviderDetailView, "provider"),
    *route("providers/<str:provider_id>/check", provider_views.ProviderStoredCheckView, "provider-check"),
    *route("providers/<str:provider_id>/refresh", provider_views.ProviderRefreshView, "provider-refresh"),
    *route("runs/", run_views.RunListView, "runs"),
    *route("runs/active", run_views.ActiveRunListView, "runs-active"),
    *route("runs/<str:run_id>", run_views.RunDetailView, "run"),
    *route("runs/<str:run_id>/cancel", run_views.RunCancelView, "run-cancel"),
    *route("runs/<str:run_id>/messages", run_views.RunMessagesView, "run-messages"),
    *route("runs/<str:run_id>/steps", run_views.RunStepsView, "run-steps"),
    *route("runs/<str:run_id>/usage", run_views.RunUsageView, "run-usage"),
    *route("runs/<str:run_id>/stream", run_views.RunStreamView, "run-stream"),
    *route("steps/", run_views.StepListView, "steps"),
    *route("steps/<str:step_id>", run_views.StepDetailView, "step"),
    *route("steps/<str:step_id>/feedback", step_views.StepFeedbackView, "step-feedback"),
    *route("steps/<str:step_id>/metrics", step_views.StepMetricsView, "step-metrics"),
    *route("tools/", tools.ToolListView, "tools"),
    *route("tools/add-base-tools", tools.BaseToolsView, "tools-add-base-tools"),
    *route("tools/count", tools.ToolCountView, "tools-count"),
    *route("tools/search", tools.ToolSearchView, "tools-search"),
    *route("tools/run", tool_runs.ToolRunView, "tools-run"),
    *route("tools/<str:tool_id>", tools.ToolDetailView, "tool"),
    *route("tags/", tag_views.TagListView, "tags"),
    *FOLDER_ROUTES,
]
