"""Ids and times as Letta writes them, shared by every projection of ``agents.wire``.

- an id is ``prefix-<uuid>`` (``message-…``, ``run-…``); the part of a row gets
  ``otid = part_otid(row id, index)``;
- LettaMessage dates have second precision (``2026-11-30T03:16:27+00:00``), resource
  timestamps keep microseconds (``2026-11-30T03:16:27.667416Z``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from django.utils import timezone
from pydantic import WithJsonSchema

from agents.engine.stop import StopReason

DateTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
"""A date or timestamp: ISO 8601 text (the OpenAPI schema says ``format: date-time``)."""

StopReasonValue = Annotated[str, WithJsonSchema({"type": "string", "enum": [reason.value for reason in StopReason]})]
"""A ``StopReason`` value."""


def public_id(prefix: str, value: Any) -> str | None:
    """``prefix-<uuid>`` for a raw UUID (or an id that already carries the prefix); ``None`` stays ``None``."""
    if value is None or value == "":
        return None
    text = str(value)
    return text if text.startswith(f"{prefix}-") else f"{prefix}-{text}"


def part_otid(row_id: Any, index: int) -> str:
    """The otid of part ``index`` of a row: the row's UUID with its low 7 bits replaced by the index.

    This is Letta's rule (it shows as the last two hex digits becoming ``80``/``81``… or ``00``/``01``…).
    """
    if not 0 <= index < 128:
        raise ValueError("A row has at most 128 parts.")
    raw = str(row_id).removeprefix("message-")
    return str(uuid.UUID(int=(uuid.UUID(raw).int & ~0x7F) | index))


def letta_date(value: datetime | None) -> str:
    """A LettaMessage ``date``: UTC, second precision, ``+00:00`` offset."""
    moment = (value or timezone.now()).astimezone(UTC)
    return moment.isoformat(timespec="seconds")


def letta_timestamp(value: datetime | None) -> str | None:
    """A resource timestamp (``created_at`` …): UTC ISO 8601 with a ``Z``, microseconds when non-zero."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
