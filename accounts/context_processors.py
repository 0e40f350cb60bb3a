from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.http import HttpRequest


def organizations(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "current_organization": getattr(request, "organization", None),
        "current_membership": getattr(request, "membership", None),
        "user_organizations": user.organizations(),
    }
