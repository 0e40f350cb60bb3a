from django.apps import AppConfig


class FoldersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "folders"

    def ready(self) -> None:
        from agents.runs.dispatch import server_loop
        from folders import broadcast

        broadcast.deliver_on(server_loop)
