"""Django's own middleware, run on the event loop for a request that carries no session.

Under ASGI, Django runs each hook of a ``MiddlewareMixin`` middleware (``process_request``,
``process_view``, ``process_response``) in a thread of its own: seventeen round trips
between the event loop and a thread for each API request with the stack in
``MIDDLEWARE``, more than the turn itself makes. None of these hooks does I/O unless the
request has a session (``SessionMiddleware`` saves one, ``MessageMiddleware`` may store
messages in one); an API key's request has none. So for a request without a session
cookie the hooks run inline on the loop; with one they hop to the request's thread as
before, and so do the response hooks of a request that opened a session (a login).
In sync mode (the test client, ``manage.py`` tools) nothing changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as DjangoMessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.middleware.clickjacking import XFrameOptionsMiddleware as DjangoXFrameOptionsMiddleware
from django.middleware.common import CommonMiddleware as DjangoCommonMiddleware
from django.middleware.csrf import CsrfViewMiddleware as DjangoCsrfViewMiddleware
from django.middleware.security import SecurityMiddleware as DjangoSecurityMiddleware

from config.csp import ContentSecurityPolicyMiddleware as ProjectContentSecurityPolicyMiddleware

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase


def has_session(request: HttpRequest) -> bool:
    return settings.SESSION_COOKIE_NAME in request.COOKIES


def session_touched(request: HttpRequest) -> bool:
    """Whether this request read or wrote its session (a new one, as it came without a cookie)."""
    session = getattr(request, "session", None)
    return bool(getattr(session, "accessed", False) or getattr(session, "modified", False))


class OnLoopWithoutSession:
    """Mixed into a ``MiddlewareMixin`` subclass: in async mode, its hooks run inline unless
    the request has a session cookie."""

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        if has_session(request):
            response: HttpResponseBase = await super().__acall__(request)  # type: ignore[misc]
            return response
        hooks: Any = self
        early = hooks.process_request(request) if hasattr(hooks, "process_request") else None
        response = early if early is not None else await hooks.get_response(request)
        if hasattr(hooks, "process_response"):
            if session_touched(request):  # a view that logged someone in: the session is saved
                response = await sync_to_async(hooks.process_response)(request, response)
            else:
                response = hooks.process_response(request, response)
        return response


class SecurityMiddleware(OnLoopWithoutSession, DjangoSecurityMiddleware):
    pass


class SessionMiddleware(OnLoopWithoutSession, DjangoSessionMiddleware):
    pass


class CommonMiddleware(OnLoopWithoutSession, DjangoCommonMiddleware):
    pass


class CsrfViewMiddleware(OnLoopWithoutSession, DjangoCsrfViewMiddleware):
    """Its ``process_view`` too, which Django calls as a coroutine in async mode (and through
    ``async_to_sync`` in sync mode)."""

    async def process_view(  # type: ignore[override]
        self, request: HttpRequest, callback: Any, callback_args: Any, callback_kwargs: Any
    ) -> HttpResponseBase | None:
        check = DjangoCsrfViewMiddleware.process_view
        if has_session(request):
            return await sync_to_async(check)(self, request, callback, callback_args, callback_kwargs)
        return check(self, request, callback, callback_args, callback_kwargs)


class AuthenticationMiddleware(OnLoopWithoutSession, DjangoAuthenticationMiddleware):
    pass


class MessageMiddleware(OnLoopWithoutSession, DjangoMessageMiddleware):
    pass


class XFrameOptionsMiddleware(OnLoopWithoutSession, DjangoXFrameOptionsMiddleware):
    pass


class ContentSecurityPolicyMiddleware(OnLoopWithoutSession, ProjectContentSecurityPolicyMiddleware):
    pass
