from django.apps import AppConfig


class ToolsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tools"

    def ready(self) -> None:
        from tools import checks  # noqa: F401  (registers the deploy check)
