"""Django's sync-only middleware whose hooks do no I/O, run on the event loop instead of a thread.

Under ASGI, Django's ``MiddlewareMixin`` sends each ``process_request`` and ``process_response``
to a thread (``sync_to_async``), whatever the hook does: two thread hops per middleware and
request, about a sixth of the web process's time in a blocking API turn (issue 24). The
classes here call the hooks in place when they cannot block: they only read the request and
set attributes or headers. ``SecurityMiddleware``, ``SessionMiddleware``, ``CsrfViewMiddleware``
and ``XFrameOptionsMiddleware`` stay Django's own: ``check --deploy`` looks for them by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as DjangoMessageMiddleware
from django.middleware.common import CommonMiddleware as DjangoCommonMiddleware

from config.csp import ContentSecurityPolicyMiddleware as SyncContentSecurityPolicyMiddleware

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase


class InPlaceHooks:
    """``MiddlewareMixin.__acall__`` without its thread hops, for requests ``in_place`` accepts."""

    get_response: Any

    def in_place(self, request: HttpRequest) -> bool:
        """Whether this request's hooks can run on the event loop (they do no I/O for it)."""
        return True

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        if not self.in_place(request):
            return await super().__acall__(request)  # type: ignore[misc,no-any-return]
        response = self.process_request(request) if hasattr(self, "process_request") else None
        response = response or await self.get_response(request)
        if hasattr(self, "process_response"):
            response = self.process_response(request, response)
        return response  # type: ignore[no-any-return]


class CommonMiddleware(InPlaceHooks, DjangoCommonMiddleware):
    """Redirects by the URL alone (``APPEND_SLASH``, ``PREPEND_WWW``) and refuses disallowed user agents."""


class AuthenticationMiddleware(InPlaceHooks, DjangoAuthenticationMiddleware):
    """Sets ``request.user`` lazily: the session is read when the user is, in the view's thread."""


class MessageMiddleware(InPlaceHooks, DjangoMessageMiddleware):
    """In place without a session: its messages then live in a cookie, or nowhere."""

    def in_place(self, request: HttpRequest) -> bool:
        return settings.SESSION_COOKIE_NAME not in request.COOKIES


class ContentSecurityPolicyMiddleware(InPlaceHooks, SyncContentSecurityPolicyMiddleware):
    """Builds the policy header from the settings and the request's host."""
