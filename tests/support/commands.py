"""Running management commands in a test, and checking the API keys they print."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIRequestFactory

from accounts.authentication import ApiKeyAuthentication


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().rstrip("\n").splitlines()


def authenticates(raw_key: str) -> bool:
    """Whether ``Authorization: Bearer <raw_key>`` passes the API's authentication."""
    request = APIRequestFactory().get("/v1/", HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    try:
        return ApiKeyAuthentication().authenticate(request) is not None
    except AuthenticationFailed:
        return False
