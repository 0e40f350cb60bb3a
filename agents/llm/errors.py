"""Turning a vendor's HTTP failure into one of our ``LLMError`` classes.

Both SDKs expose a status code, the response headers and the decoded error body;
the rules below are shared so Anthropic and OpenAI failures read the same to the engine.

The message of an ``LLMError`` reaches the tenant (a run's error, a stream's error
event), so it is generic: the status and what it means. The vendor's own message, the
exception text and the address the server tried stay in the server log (logger
``agents.llm.errors``), where an operator can match them by the status.
"""

from __future__ import annotations

import logging
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

import httpx2

from agents.llm.base import (
    LLMAuthenticationError,
    LLMBadRequest,
    LLMConnectionError,
    LLMContextWindowExceeded,
    LLMError,
    LLMInvalidResponse,
    LLMOverloaded,
    LLMRateLimited,
    LLMTimeout,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

logger = logging.getLogger(__name__)

# Phrases vendors (and compatible servers) use when the prompt does not fit.
_CONTEXT_WINDOW_MARKERS = (
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "context length",
    "too many tokens",
    "input is too long",
)

# Error ``type``/``code`` values that name the cause when the status code cannot
# (an error event inside a 200 stream).
_TYPE_STATUS = {
    "authentication_error": 401,
    "invalid_api_key": 401,
    "permission_error": 403,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "overloaded_error": 529,
    "api_error": 500,
    "server_error": 500,
    "invalid_request_error": 400,
    "context_length_exceeded": 400,
}


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def is_context_window_message(message: str) -> bool:
    lowered = message.lower()
    return any(marker in lowered for marker in _CONTEXT_WINDOW_MARKERS)


def error_from_status(
    provider: str,
    *,
    status: int | None,
    message: str,
    headers: Mapping[str, str] | None = None,
    error_type: str | None = None,
) -> LLMError:
    """The ``LLMError`` for an HTTP error (or an error event inside a stream).

    ``provider`` is the display name used in the message ("Anthropic").
    """
    effective = status if status is not None and status >= 400 else _TYPE_STATUS.get(error_type or "", 500)
    shown_status = status if status and status >= 400 else error_type or "stream"
    logger.warning("%s API error (%s): %s", provider, shown_status, message)
    prefix = f"{provider} API error ({shown_status})"
    if effective in (401, 403):
        return LLMAuthenticationError(
            f"{prefix}: the provider refused the credentials; check the API key", status_code=effective
        )
    if effective == 429:
        return LLMRateLimited(
            f"{prefix}: rate limited by the provider", retry_after=parse_retry_after(headers), status_code=429
        )
    if effective in (529, 503):
        return LLMOverloaded(f"{prefix}: Overloaded, the provider is busy; try again later", status_code=effective)
    if 400 <= effective < 500:
        if is_context_window_message(message) or error_type == "context_length_exceeded":
            return LLMContextWindowExceeded(
                f"{prefix}: the prompt does not fit the model's context window", status_code=effective
            )
        return LLMBadRequest(
            f"{prefix}: the provider refused the request (check the model name and settings)", status_code=effective
        )
    return LLMError(f"{prefix}: the provider failed to answer", status_code=effective)


def connection_error(provider: str, exc: BaseException) -> LLMConnectionError | LLMTimeout:
    """Says whether the server could not be reached, went silent, or broke the connection during the answer."""
    logger.warning("Connection to %s failed: %r", provider, exc, exc_info=exc)
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, httpx2.ConnectError | httpx2.ConnectTimeout):
            return LLMConnectionError(f"Could not reach {provider}")
        if isinstance(cause, httpx2.TimeoutException):
            return LLMTimeout(f"{provider} sent nothing within the first-byte timeout (LLM_FIRST_BYTE_TIMEOUT)")
        cause = cause.__cause__ or cause.__context__
    return LLMConnectionError(f"Connection to {provider} failed mid-response")


def malformed_response(provider: str, exc: BaseException) -> LLMInvalidResponse:
    """The provider answered with something the SDK could not read; the detail goes to the log."""
    logger.warning("%s sent a malformed response: %s", provider, exc)
    return LLMInvalidResponse(f"{provider} sent a malformed response")
