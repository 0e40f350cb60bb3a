"""Encryption at rest for secrets stored in the database (provider API keys).

``FIELD_ENCRYPTION_KEY`` holds one key, or several separated by commas: the first
encrypts, every one decrypts (``MultiFernet``). To rotate, put the new key first and
keep the old ones after it, run ``manage.py reencrypt_secrets``, then drop the old ones.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


def encryption_keys() -> list[str]:
    configured: str | list[str] | tuple[str, ...] = settings.FIELD_ENCRYPTION_KEY
    keys = configured if isinstance(configured, list | tuple) else configured.split(",")
    return [key.strip() for key in keys if key.strip()]


def _fernet() -> MultiFernet:
    fernets = []
    for key in encryption_keys():
        digest = hashlib.sha256(("field-encryption:" + key).encode()).digest()
        fernets.append(Fernet(base64.urlsafe_b64encode(digest)))
    return MultiFernet(fernets)


def encrypt_secret(plaintext: str) -> str:
    return _fernet().encrypt(plaintext.encode()).decode() if plaintext else ""


def decrypt_secret(token: str) -> str:
    return _open(token, MultiFernet.decrypt, "Stored secret cannot be decrypted: FIELD_ENCRYPTION_KEY changed?")


def reencrypt_secret(token: str) -> str:
    """``token`` encrypted again with the first key (it may have been made with any of them)."""
    return _open(token, MultiFernet.rotate, "Stored secret cannot be decrypted with any FIELD_ENCRYPTION_KEY")


def _open(token: str, operation: Callable[[MultiFernet, bytes], bytes], failure: str) -> str:
    """``operation`` on a stored token (empty stays empty); a token no key opens is a ``ValueError(failure)``."""
    if not token:
        return ""
    try:
        return operation(_fernet(), token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError(failure) from exc
