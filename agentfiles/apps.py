from __future__ import annotations

from django.apps import AppConfig


class AgentFilesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agentfiles"
    verbose_name = "Agent files"
