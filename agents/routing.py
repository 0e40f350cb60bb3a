"""WebSocket routes (mounted by ``config.asgi`` behind the origin check and session auth)."""

from django.urls import path

from agents.approvals.consumers import ApprovalInboxConsumer
from agents.chat.consumers import AgentChatConsumer
from folders.consumers import FolderFilesConsumer

websocket_urlpatterns = [
    # Channels' URLRouter takes ASGI apps in ``path``; django-stubs allows only views.
    path("ws/agents/<str:agent_id>/", AgentChatConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/approvals/", ApprovalInboxConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/folders/<str:folder_id>/", FolderFilesConsumer.as_asgi()),  # type: ignore[arg-type]
]
