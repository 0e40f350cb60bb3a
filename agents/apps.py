from django.apps import AppConfig
from django.db.backends.signals import connection_created


class AgentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents"

    def ready(self) -> None:
        from agents.database import make_sqlite_file_private

        connection_created.connect(make_sqlite_file_private, dispatch_uid="agents.sqlite_private")
