"""The ``/v1`` routes of agent files; ``config/urls.py`` includes them before ``agents.api.urls``,
whose agent detail route and unknown-path catch-all would take ``agents/import``."""

from __future__ import annotations

from agentfiles import api
from agents.api.urls import route

app_name = "agentfiles_api"

urlpatterns = [
    *route("agents/import", api.AgentImportView, "agents-import"),
    *route("agents/<str:agent_id>/export", api.AgentExportView, "agent-export"),
]
