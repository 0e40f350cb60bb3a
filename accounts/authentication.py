"""API authentication: ``Authorization: Bearer <key>``; the key decides the organization."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions
from rest_framework.authentication import CSRFCheck

from accounts import api_key_cache
from accounts.access import organization_of, session_user_id
from accounts.models import ApiKey, hash_api_key
from accounts.rate_limits import CountingRateThrottle

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.views import APIView

    from accounts.models import User

LAST_USED_RESOLUTION = timedelta(minutes=1)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[User | AnonymousUser, ApiKey] | None:
        header = authentication.get_authorization_header(request).decode(errors="replace")
        if not header:
            return None
        scheme, _, raw_key = header.partition(" ")
        if scheme.lower() != self.keyword.lower() or not raw_key.strip():
            raise exceptions.AuthenticationFailed("Invalid authorization header; expected 'Bearer <api key>'.")
        key_hash = hash_api_key(raw_key.strip())
        key = api_key_cache.authenticated_key(key_hash, lambda: _active_key(key_hash))
        if key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
            key.last_used_at = now
            api_key_cache.note_used(key_hash, now)
        return (key.created_by or AnonymousUser()), key

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


def _active_key(key_hash: str) -> ApiKey | None:
    """The active key with this hash, with its organization and creator: the one query of authentication."""
    return ApiKey.objects.active().select_related("organization", "created_by").filter(key_hash=key_hash).first()


class HasOrganization(permissions.BasePermission):
    """Allows a request that acts for an organization (through a key or a session).

    A session (a browser's cookie) also needs Django's CSRF token on unsafe methods, as
    any form post does; a request with an API key needs none (no cookie can supply one).
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        if organization_of(request) is None:
            return False
        if not isinstance(request.auth, ApiKey):
            enforce_csrf(request)
        return True


def enforce_csrf(request: Request) -> None:
    """Django's CSRF check for a session-authenticated API call; 403 ``CSRF Failed: …`` when it fails."""
    check = CSRFCheck(lambda _request: None)  # type: ignore[arg-type]  # the view is never called
    check.process_request(request._request)  # puts the cookie's token where process_view reads it
    reason = check.process_view(request._request, None, (), {})  # type: ignore[arg-type]  # DRF's returns the reason
    if reason:
        raise exceptions.PermissionDenied(f"CSRF Failed: {reason}")


class ApiKeyRateThrottle(CountingRateThrottle):
    scope = "api_key"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        if isinstance(request.auth, ApiKey):
            return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}
        return None


class SessionUserRateThrottle(CountingRateThrottle):
    """Browser-session callers of ``/v1`` (no API key), counted per user (``API_SESSION_RATE_LIMIT``)."""

    scope = "session_user"

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        user_id = None if isinstance(request.auth, ApiKey) else session_user_id(request)
        if user_id is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": user_id}
