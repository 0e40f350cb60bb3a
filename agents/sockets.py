"""What the product's WebSocket consumers share: close codes, the frame base, error and accepted frames."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from agents.wire.messages import public_id

if TYPE_CHECKING:
    from collections.abc import Iterable

    from agents.errors import ApplicationError
    from agents.models import Run

SERVER_FAULT = "The server could not handle that just now. Try again in a moment."
# Close codes in the private range: the tab stops reconnecting on these.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_MANY_FRAMES = 4429


class SocketFrame(BaseModel):
    """A frame from a tab: strict, so a typo is an error frame rather than a silently ignored field."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def error_detail(exc: ApplicationError) -> str:
    detail = exc.detail
    if isinstance(detail, dict):
        return str(detail.get("message") or detail)
    return str(detail)


def public_run_ids(runs: Iterable[Run]) -> list[str]:
    return [public_id("run", run.pk) or "" for run in runs]


def accepted_frame(request: str, runs: list[Run]) -> dict[str, Any]:
    return {"type": "accepted", "request": request, "run_ids": public_run_ids(runs)}
