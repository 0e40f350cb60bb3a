from __future__ import annotations

from django.urls import path

from agentfiles import views

app_name = "agentfiles"

urlpatterns = [
    path("import/", views.agent_import, name="import"),
    path("<str:agent_id>/export/", views.agent_export, name="export"),
]
