"""The one DRF exception handler: every error leaves the API in Letta's (FastAPI's) shape.

- ``ApplicationError`` → its status, ``{"detail": <detail>}`` (a string, or an object for
  ``PendingApprovalConflict``); a 409 also says ``x-should-retry: false``, and so does
  any 5xx answered to a ``POST`` or ``PATCH`` (letta-client 1.x would send it twice more);
- malformed input (serializer or query validation, bad JSON) → 422 with FastAPI's
  ``{"detail": [{"loc": [...], "msg", "type"}]}``, which the SDK raises as ``UnprocessableEntityError``;
- a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` → 413 ``{"detail": "..."}``;
- a known path with a method it does not serve → 405 ``{"detail": "Method Not Allowed"}`` (FastAPI's);
- ``Http404`` / other DRF errors → their status with ``{"detail": "..."}`` (401 keeps ``WWW-Authenticate``,
  429 keeps ``Retry-After``);
- anything else → logged, 500 ``{"detail": "An internal server error occurred"}``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback
from typing_extensions import TypedDict

from agents.errors import ApplicationError

logger = logging.getLogger("agents.api")

INTERNAL_ERROR_DETAIL = "An internal server error occurred"


class ErrorResponse(TypedDict):
    """Every error's body."""

    detail: Any
    """A message; a list of ``{"loc", "msg", "type"}`` for input that does not validate (422); an
    object for a ``PENDING_APPROVAL`` conflict."""


def _flatten(errors: Any, path: list[str | int]) -> list[dict[str, Any]]:
    if isinstance(errors, dict):
        return [item for key, value in errors.items() for item in _flatten(value, [*path, key])]
    if isinstance(errors, list) and errors and all(isinstance(e, str) for e in errors):
        return [{"loc": path, "msg": str(e), "type": getattr(e, "code", None) or "value_error"} for e in errors]
    if isinstance(errors, list):
        return [item for index, value in enumerate(errors) for item in _flatten(value, [*path, index])]
    return [{"loc": path, "msg": str(errors), "type": getattr(errors, "code", None) or "value_error"}]


def validation_detail(errors: Any, location: str = "body") -> list[dict[str, Any]]:
    """DRF's nested ``serializer.errors`` as FastAPI's list of ``{"loc", "msg", "type"}``."""
    detail = _flatten(errors, [location])
    for item in detail:
        if item["loc"][-1:] == ["non_field_errors"]:
            item["loc"] = item["loc"][:-1]
    return detail


# Methods a replay could apply twice (PUT and DELETE are idempotent).
NON_IDEMPOTENT = frozenset({"POST", "PATCH"})


def body_too_large_detail() -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return f"Request body too large: the limit is {limit} bytes" if limit else "Request body too large"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    response = _error_response(exc, context)
    request = context.get("request")
    method = getattr(request, "method", "")
    if response.status_code >= status.HTTP_500_INTERNAL_SERVER_ERROR and method in NON_IDEMPOTENT:
        response["x-should-retry"] = "false"
    return response


def _error_response(exc: Exception, context: dict[str, Any]) -> Response:
    set_rollback()
    if isinstance(exc, ApplicationError):
        # A conflict is the state of the agent, not a glitch: letta-client 1.x must not send it again.
        retry = {"x-should-retry": "false"} if exc.status_code == status.HTTP_409_CONFLICT else None
        return Response({"detail": exc.detail}, status=exc.status_code, headers=retry)
    if isinstance(exc, RequestDataTooBig):
        return Response({"detail": body_too_large_detail()}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, Http404):
        return Response({"detail": str(exc) or "Not found"}, status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, exceptions.ValidationError):
        return Response({"detail": validation_detail(exc.detail)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
    if isinstance(exc, exceptions.MethodNotAllowed):
        return Response({"detail": "Method Not Allowed"}, status=status.HTTP_405_METHOD_NOT_ALLOWED)
    if isinstance(exc, exceptions.ParseError):
        detail = [{"loc": ["body"], "msg": str(exc.detail), "type": "json_invalid"}]
        return Response({"detail": detail}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
    if isinstance(exc, exceptions.APIException):
        headers: dict[str, str] = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header  # type: ignore[attr-defined]
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(int(exc.wait))  # type: ignore[attr-defined]
        return Response({"detail": exc.detail}, status=exc.status_code, headers=headers)
    view = context.get("view")
    logger.exception("Unhandled error in %s", type(view).__name__ if view else "the API", exc_info=exc)
    return Response({"detail": INTERNAL_ERROR_DETAIL}, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
