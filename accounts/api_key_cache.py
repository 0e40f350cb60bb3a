"""A short per-process memory of authenticated API keys, forgotten at once when access changes.

Every ``/v1`` request authenticates its key; looking it up (with its organization and its
creator, and whether the creator is still an active member) was a query per request. A
key found active is kept here for ``API_KEY_CACHE_SECONDS`` with the *access generation*
it was read under: a token in the shared cache (Redis in production, so every process sees
it) that any change of who may use which key replaces. A request reads the token (one
cache round trip, no query) and trusts its memory only while the token is unchanged, so a
revocation made in any process stops the key on the very next request everywhere.

What changes the generation (``forget``), right away and again once the change is committed
(a request that read the old row meanwhile cannot keep it): a key saved or deleted (its
``revoked_at``, ``expires_at``, or a bulk ``ApiKey.objects.update``), a user saved (say,
deactivated) or deleted, a membership saved or removed. An expiry needs no event: each use
checks ``expires_at``. The time limit bounds what a write outside the ORM could leave behind.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from accounts.models import ApiKey, Membership, User
from accounts.signals import api_keys_updated

if TYPE_CHECKING:
    from collections.abc import Callable

GENERATION_KEY = "accounts:api-keys:generation"


@dataclass(frozen=True)
class _Entry:
    key: ApiKey  # its organization and creator loaded; each request gets copies (``_copy``)
    generation: str | None
    until: float


_entries: dict[str, _Entry] = {}
_lock = threading.Lock()


def generation() -> str | None:
    """The access generation now (``None`` until the first change, or after the cache lost it)."""
    value = cache.get(GENERATION_KEY)
    return value if isinstance(value, str) else None


def authenticated_key(key_hash: str, load: Callable[[], ApiKey | None]) -> ApiKey | None:
    """The active key with ``key_hash``: from this process's memory when still valid, else ``load()``-ed
    (and remembered). Each caller gets its own instances, so nothing a request does to them is shared."""
    seconds = settings.API_KEY_CACHE_SECONDS
    if seconds <= 0:
        return load()
    current = generation()
    now = time.monotonic()
    with _lock:
        entry = _entries.get(key_hash)
    if entry is not None and entry.generation == current and entry.until > now and _unexpired(entry.key):
        return _copy(entry.key)
    key = load()
    with _lock:
        if key is None:
            _entries.pop(key_hash, None)
        else:
            _entries[key_hash] = _Entry(key=_copy(key), generation=current, until=now + seconds)
    return key


def note_used(key_hash: str, used_at: Any) -> None:
    """Remember that ``last_used_at`` was written, so the next requests do not write it again."""
    with _lock:
        entry = _entries.get(key_hash)
        if entry is not None:
            entry.key.last_used_at = used_at


def forget() -> None:
    """Access changed: every process looks its keys up again, now and once the change is committed."""
    _renew_generation()
    transaction.on_commit(_renew_generation)


def _renew_generation() -> None:
    with _lock:
        _entries.clear()
    cache.set(GENERATION_KEY, uuid.uuid4().hex, timeout=None)


def _unexpired(key: ApiKey) -> bool:
    return key.expires_at is None or key.expires_at > timezone.now()


def _copy(key: ApiKey) -> ApiKey:
    fresh = copy.copy(key)
    fresh.organization = copy.copy(key.organization)
    fresh.created_by = copy.copy(key.created_by) if key.created_by is not None else None
    return fresh


def _key_saved(sender: Any, instance: ApiKey, update_fields: Any = None, **kwargs: Any) -> None:
    if not (update_fields and set(update_fields) <= {"last_used_at"}):
        forget()


def _user_saved(sender: Any, instance: User, update_fields: Any = None, **kwargs: Any) -> None:
    if not (update_fields and set(update_fields) <= {"last_login"}):
        forget()


def _access_changed(sender: Any, **kwargs: Any) -> None:
    forget()


def connect_signals() -> None:
    post_save.connect(_key_saved, sender=ApiKey, dispatch_uid="api_key_cache.key_saved")
    post_delete.connect(_access_changed, sender=ApiKey, dispatch_uid="api_key_cache.key_deleted")
    api_keys_updated.connect(_access_changed, sender=ApiKey, dispatch_uid="api_key_cache.keys_updated")
    post_save.connect(_user_saved, sender=User, dispatch_uid="api_key_cache.user_saved")
    post_delete.connect(_access_changed, sender=User, dispatch_uid="api_key_cache.user_deleted")
    post_save.connect(_access_changed, sender=Membership, dispatch_uid="api_key_cache.membership_saved")
    post_delete.connect(_access_changed, sender=Membership, dispatch_uid="api_key_cache.membership_removed")
