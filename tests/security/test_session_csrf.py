"""Issue 14, item 11: a browser session calling ``/v1`` needs the CSRF token; an API key does not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.middleware.csrf import _get_new_csrf_string
from django.test import Client

from tests.factories import api_key_for

if TYPE_CHECKING:
    from tests.conftest import Cast


def test_a_session_authenticated_api_write_without_the_csrf_token_is_refused(cast: Cast):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(cast.alice)

    refused = browser.post("/v1/agents/", {"name": "forged"}, content_type="application/json")
    assert refused.status_code == 403
    assert refused.json()["detail"].startswith("CSRF Failed")
    assert browser.get("/v1/agents/").status_code == 200  # reads need no token

    token = _get_new_csrf_string()
    browser.cookies["csrftoken"] = token
    allowed = browser.post("/v1/agents/", {"name": "mine"}, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert allowed.status_code == 200, allowed.content


def test_an_api_key_call_needs_no_csrf_token(cast: Cast):
    _, raw_key = api_key_for(cast.org_a, cast.alice)
    caller = Client(enforce_csrf_checks=True)
    response = caller.post(
        "/v1/agents/", {"name": "scripted"}, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw_key}"
    )
    assert response.status_code == 200, response.content
