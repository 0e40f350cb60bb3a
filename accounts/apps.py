from typing import Any

from django.apps import AppConfig
from django.db.models.signals import pre_delete


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"

    def ready(self) -> None:
        from accounts.models import User

        pre_delete.connect(_revoke_keys_of_deleted_user, sender=User, dispatch_uid="accounts.revoke_keys")

        from accounts.access_watch import connect_signals

        connect_signals()


def _revoke_keys_of_deleted_user(sender: Any, instance: Any, **kwargs: Any) -> None:
    """``created_by`` becomes NULL when a user is deleted; their keys must not outlive them as creator-less keys."""
    from accounts.services import api_keys_revoke_of_user

    api_keys_revoke_of_user(instance)
