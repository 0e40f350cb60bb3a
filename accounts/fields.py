"""A JSON model field whose value is encrypted at rest with ``FIELD_ENCRYPTION_KEY``."""

from __future__ import annotations

import json
from typing import Any

from django.db import models

from accounts.crypto import decrypt_secret, encrypt_secret

_ENVELOPE = "fernet"


class EncryptedJSONField(models.JSONField):
    """Stores ``{"fernet": <token>}``; Python code reads and writes the plain value.

    Not for lookups: each write makes a different token. Rows written before the field
    was encrypted (a plain JSON value) read as they are until saved again.
    """

    def get_prep_value(self, value: Any) -> Any:
        if value is None:
            return None
        return {_ENVELOPE: encrypt_secret(json.dumps(value, cls=self.encoder))}

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        stored = super().from_db_value(value, expression, connection)
        if isinstance(stored, dict) and set(stored) == {_ENVELOPE}:
            return json.loads(decrypt_secret(stored[_ENVELOPE]), cls=self.decoder)
        return stored
