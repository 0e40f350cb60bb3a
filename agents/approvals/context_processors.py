"""The header's approvals badge: how many approval requests of the organization wait for a person."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from agents.approvals.inbox import pending_approval_count

if TYPE_CHECKING:
    from django.http import HttpRequest


def approvals(request: HttpRequest) -> dict[str, Any]:
    organization = getattr(request, "organization", None)
    user = getattr(request, "user", None)
    if organization is None or user is None or not user.is_authenticated:
        return {}
    # Counted when a template first reads it, once per page.
    return {"pending_approvals_count": cache(lambda: pending_approval_count(organization))}
