"""The connect stream's events, read whole (the view streams them from an async iterator)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync

if TYPE_CHECKING:
    from django.http import StreamingHttpResponse


def stream_text(response: StreamingHttpResponse) -> str:
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"

    async def collect() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])  # type: ignore[union-attr]

    return async_to_sync(collect)().decode()


def events(response: StreamingHttpResponse) -> list[dict[str, Any]]:
    body = stream_text(response)
    return [json.loads(line.removeprefix("data: ")) for line in body.split("\n\n") if line.startswith("data: ")]
