from __future__ import annotations

from typing import TYPE_CHECKING

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings

from accounts.access import resolve_request_organization

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from django.http import HttpRequest, HttpResponse

    from accounts.models import Membership, Organization


class CurrentOrganizationMiddleware:
    """Sets ``request.organization`` and ``request.membership`` once per request.

    Sync and async: under ASGI it runs on the event loop, and a request without a
    session cookie (an API key's) is settled there, as no one is signed in; only a
    session's lookup goes to the request's thread.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse | Awaitable[HttpResponse]]) -> None:
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        if self.async_mode:
            return self.__acall__(request)
        _remember(request, *resolve_request_organization(request))
        return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if settings.SESSION_COOKIE_NAME in request.COOKIES:
            _remember(request, *await sync_to_async(resolve_request_organization)(request))
        else:
            _remember(request, None, None)
        return await self.get_response(request)  # type: ignore[no-any-return,misc]


def _remember(request: HttpRequest, organization: Organization | None, membership: Membership | None) -> None:
    # What accounts.http.OrganizationHttpRequest declares, once membership_required has passed.
    request.organization = organization  # type: ignore[attr-defined]
    request.membership = membership  # type: ignore[attr-defined]
