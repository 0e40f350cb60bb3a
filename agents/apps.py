from django.apps import AppConfig
from django.db.backends.signals import connection_created


class AgentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents"

    def ready(self) -> None:
        from agents import broadcast
        from agents.chat.actions import chat_memory
        from agents.database import make_sqlite_file_private
        from agents.memory.notes import tool_row_notes

        connection_created.connect(make_sqlite_file_private, dispatch_uid="agents.sqlite_private")
        # The announcer tells every tab a tool row's memory notes, and the panel and the context
        # meter once a run ends: both are computed in rooms above it.
        broadcast.describe_chat_with(
            broadcast.ChatState(tool_row_notes=tool_row_notes, run_end_state=lambda agent: chat_memory(agent=agent))
        )
