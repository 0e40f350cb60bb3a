"""View decorators for pages that act within the request's organization.

They read ``request.membership``, which ``CurrentOrganizationMiddleware`` set
once for the request; they never resolve the organization again.
"""

from __future__ import annotations

from functools import wraps
from typing import TYPE_CHECKING, Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse

    from accounts.http import OrganizationHttpRequest

    View = Callable[..., HttpResponse]


def membership_required(view: View) -> View:
    """Logged in and a member of some organization (else offered to create one)."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if getattr(request, "membership", None) is None:
            return redirect("accounts:organization_create")
        return view(request, *args, **kwargs)

    return wrapper


def manager_required(view: View) -> View:
    """An owner or admin of the current organization; members get a 403 for their own organization."""

    @membership_required
    @wraps(view)
    def wrapper(request: OrganizationHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.membership.can_manage:
            raise PermissionDenied("Only owners and admins can do that.")
        return view(request, *args, **kwargs)

    return wrapper
