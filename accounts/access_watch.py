"""Long-lived connections (SSE streams, chat WebSockets) learn at once when their access may have ended.

A connection joins the channel-layer groups of what it was authorized with
(``watch_groups``): its user, its API key, its browser session. Then:

- a membership removed, a user deactivated or deleted, a key revoked or given an expiry
  sends ``access.changed`` to the user's or key's group once the change is committed;
  every connection there re-checks (``connection_access_holds``) and closes if its access ended;
- a logout sends ``access.ended`` to that session's group: its connections close without
  asking (the session is flushed just after the signal, so a re-check could still find it).

Connections also re-check on their own at least every ``STREAM_ACCESS_RECHECK_SECONDS``
(expiry needs no event), so a lost group message delays the close, never prevents it.
"""

from __future__ import annotations

import hashlib
import logging
from importlib import import_module
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_delete

from accounts.models import ApiKey, Membership, User

if TYPE_CHECKING:
    from collections.abc import Iterable

logger = logging.getLogger(__name__)

ACCESS_CHANGED = "access.changed"
ACCESS_ENDED = "access.ended"


def user_group(user_id: Any) -> str:
    return f"access.user.{user_id}"


def key_group(api_key_id: Any) -> str:
    return f"access.key.{api_key_id}"


def session_group(session_key: str) -> str:
    # Never the session key itself: group names may be visible in Redis.
    return f"access.session.{hashlib.sha256(session_key.encode()).hexdigest()[:40]}"


def watch_groups(*, user_id: Any, api_key_id: Any, session_key: str | None) -> list[str]:
    groups = []
    if user_id is not None:
        groups.append(user_group(user_id))
    if api_key_id is not None:
        groups.append(key_group(api_key_id))
    if session_key:
        groups.append(session_group(session_key))
    return groups


def connection_access_holds(*, organization_id: Any, user_id: Any, api_key_id: Any, session_key: str | None) -> bool:
    """Whether a connection may go on: its key still authenticates, or its user is still an active
    member of the organization and (for a browser session) not logged out."""
    if api_key_id is not None:
        return ApiKey.objects.active().filter(pk=api_key_id, organization_id=organization_id).exists()
    if not Membership.objects.filter(user_id=user_id, user__is_active=True, organization_id=organization_id).exists():
        return False
    return session_key is None or import_module(settings.SESSION_ENGINE).SessionStore().exists(session_key)


def announce_access_changed(*, user_id: Any = None, api_key_id: Any = None) -> None:
    """Tell the connections of ``user_id`` / ``api_key_id`` to re-check, once the change is committed."""
    groups = watch_groups(user_id=user_id, api_key_id=api_key_id, session_key=None)
    transaction.on_commit(lambda: _send(groups, {"type": ACCESS_CHANGED}))


def announce_session_ended(session_key: str) -> None:
    _send([session_group(session_key)], {"type": ACCESS_ENDED})


def _send(groups: Iterable[str], message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    for group in groups:
        try:
            async_to_sync(layer.group_send)(group, message)
        except Exception:
            # The periodic re-check still closes them; a logout or removal must not fail for this.
            logger.exception("Could not tell the connections of %s that their access changed", group)


def connect_signals() -> None:
    post_delete.connect(_membership_removed, sender=Membership, dispatch_uid="access_watch.membership")
    post_save.connect(_user_saved, sender=User, dispatch_uid="access_watch.user_saved")
    pre_delete.connect(_user_deleted, sender=User, dispatch_uid="access_watch.user_deleted")
    post_save.connect(_api_key_saved, sender=ApiKey, dispatch_uid="access_watch.api_key")
    user_logged_out.connect(_logged_out, dispatch_uid="access_watch.logout")


def _membership_removed(sender: Any, instance: Membership, **kwargs: Any) -> None:
    announce_access_changed(user_id=instance.user_id)


def _user_saved(sender: Any, instance: User, created: bool = False, **kwargs: Any) -> None:
    if not created and not instance.is_active:
        announce_access_changed(user_id=instance.pk)


def _user_deleted(sender: Any, instance: User, **kwargs: Any) -> None:
    announce_access_changed(user_id=instance.pk)


def _api_key_saved(sender: Any, instance: ApiKey, created: bool = False, **kwargs: Any) -> None:
    if not created and (instance.revoked_at is not None or instance.expires_at is not None):
        announce_access_changed(api_key_id=instance.pk)


def _logged_out(sender: Any, request: Any = None, **kwargs: Any) -> None:
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if session_key:
        announce_session_ended(session_key)
