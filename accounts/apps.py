from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"

    def ready(self) -> None:
        from accounts import api_key_cache
        from accounts.access_watch import connect_signals
        from accounts.receivers import connect_receivers

        connect_receivers()
        connect_signals()
        api_key_cache.connect_signals()
