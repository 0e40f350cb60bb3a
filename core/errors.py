"""The one error hierarchy: each error carries its HTTP status and a Letta-shaped ``detail``.

Raised by services everywhere, mapped to HTTP once (the API's exception handler) and to
error frames by the WebSocket consumers. Apps subclass these for their own errors.
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    status_code: int = 400
    default_detail: str = "Bad request"

    def __init__(self, detail: Any = None) -> None:
        self.detail: Any = detail if detail is not None else self.default_detail
        super().__init__(detail if isinstance(detail, str) else str(self.detail))


class ValidationFailed(ApplicationError):
    status_code = 422


class NotFound(ApplicationError):
    status_code = 404
    default_detail = "Not found"


class InvalidArgument(ApplicationError):
    """Well-formed input that names something we cannot use (Letta's ``INVALID_ARGUMENT``, 400)."""

    status_code = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"INVALID_ARGUMENT: {message}")
        self.field = field


class Conflict(ApplicationError):
    """The request clashes with existing state (a tool name already taken, …)."""

    status_code = 409
