"""Login throttling that cannot be turned against the people it protects (django-axes hooks).

Failures are counted per (account, address) pair: ``LOGIN_FAILURE_LIMIT`` wrong passwords
for one account from one address lock that pair for ``LOGIN_LOCKOUT_MINUTES``. The same
account from another address, and other accounts from the same address, still log in, so
neither a guess at someone's email nor a colleague behind the same NAT locks anyone else out.

An address alone is locked only when its failures over every account reach the much higher
``LOGIN_ADDRESS_FAILURE_LIMIT`` (password spraying from one place). Superusers see and clear
lockouts in the admin ("Access attempts": deleting a row lifts its lock).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.shortcuts import render

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

PAIR: list[str] = ["username", "ip_address"]


def _address(request_or_attempt: Any) -> str | None:
    """The client's address: axes annotates requests, and passes stored attempts when it resets."""
    if isinstance(request_or_attempt, AccessAttempt):
        value = request_or_attempt.ip_address
    else:
        value = getattr(request_or_attempt, "axes_ip_address", None)
    return str(value) if value else None


def address_failures(address: str) -> int:
    """Failed logins from ``address`` over every account, within the cool-off window."""
    total = AccessAttempt.objects.filter(ip_address=address).aggregate(total=Sum("failures_since_start"))["total"]
    return total or 0


def lockout_parameters(request_or_attempt: Any, credentials: dict[str, Any] | None = None) -> list[Any]:
    """``AXES_LOCKOUT_PARAMETERS``: the pair always; the address alone once it passes its own bar."""
    address = _address(request_or_attempt)
    if address and address_failures(address) >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
        return [PAIR, "ip_address"]
    return [PAIR]


def lockout_minutes() -> int:
    return max(1, int(settings.AXES_COOLOFF_TIME.total_seconds() // 60))


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: a 429 page that says when to try again."""
    return render(request, "accounts/locked_out.html", {"minutes": lockout_minutes()}, status=429)
