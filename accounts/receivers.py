"""What the accounts app does when its rows change elsewhere; connected once, in ``AccountsConfig.ready``."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import pre_delete

from accounts.models import User
from accounts.services import api_keys_revoke_of_user


def connect_receivers() -> None:
    pre_delete.connect(revoke_keys_of_deleted_user, sender=User, dispatch_uid="accounts.revoke_keys")


def revoke_keys_of_deleted_user(sender: Any, instance: User, **kwargs: Any) -> None:
    """``created_by`` becomes NULL when a user is deleted; their keys must not outlive them as creator-less keys."""
    api_keys_revoke_of_user(instance)
