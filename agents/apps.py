from django.apps import AppConfig
from django.core.signals import setting_changed
from django.db.backends.signals import connection_created


class AgentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "agents"

    def ready(self) -> None:
        from agents import broadcast
        from agents.chat.actions import chat_memory
        from agents.database import make_sqlite_file_private
        from agents.memory.notes import tool_row_notes
        from agents.runs.setup_cache import forget_on_settings_change

        connection_created.connect(make_sqlite_file_private, dispatch_uid="agents.sqlite_private")
        # A provider's client is built from settings too (the server's keys and URLs): a change of them
        # (tests override settings) leaves nothing kept from before.
        setting_changed.connect(forget_on_settings_change, dispatch_uid="agents.setup_cache_settings")
        # The announcer tells every tab a tool row's memory notes, and the panel and the context
        # meter once a run ends: both are computed in rooms above it.
        broadcast.describe_chat_with(
            broadcast.ChatState(tool_row_notes=tool_row_notes, run_end_state=lambda agent: chat_memory(agent=agent))
        )
