from __future__ import annotations

from typing import TYPE_CHECKING

from accounts.access import resolve_request_organization

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse


class CurrentOrganizationMiddleware:
    """Sets ``request.organization`` and ``request.membership`` once per request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        organization, membership = resolve_request_organization(request)
        # What accounts.http.OrganizationHttpRequest declares, once membership_required has passed.
        request.organization = organization  # type: ignore[attr-defined]
        request.membership = membership  # type: ignore[attr-defined]
        return self.get_response(request)
