"""Issue 14, item 8: repeated failed logins lock the account and the address out, on the site and the admin."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.urls import reverse

from tests.factories import DEFAULT_PASSWORD

if TYPE_CHECKING:
    from tests.conftest import Cast


@pytest.fixture
def low_limit(settings):
    settings.AXES_FAILURE_LIMIT = 3
    return settings


def _login(client, email: str, password: str, *, address: str = "203.0.113.7", url: str = "accounts:login"):
    return client.post(reverse(url), {"username": email, "password": password}, REMOTE_ADDR=address)


def test_an_account_is_locked_after_repeated_failures_even_with_the_right_password(client, cast: Cast, low_limit):
    answers = [_login(client, cast.alice.email, f"wrong-{n}", address=f"198.51.100.{n}").status_code for n in range(3)]
    assert answers == [200, 200, 429]  # the third failure reaches the limit
    locked = _login(client, cast.alice.email, DEFAULT_PASSWORD, address="198.51.100.99")
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_address_is_locked_after_failures_across_accounts(client, cast: Cast, low_limit):
    for email in ("nobody1@example.com", "nobody2@example.com", "nobody3@example.com"):
        _login(client, email, "guess")
    assert _login(client, cast.bob.email, DEFAULT_PASSWORD).status_code == 429
    assert _login(client, cast.bob.email, DEFAULT_PASSWORD, address="192.0.2.10").status_code == 302


def test_the_admin_login_is_locked_out_too(client, cast: Cast, low_limit):
    cast.alice.is_staff = True
    cast.alice.save(update_fields=["is_staff"])
    for attempt in range(3):
        _login(client, cast.alice.email, f"wrong-{attempt}", url="admin:login")
    assert _login(client, cast.alice.email, DEFAULT_PASSWORD, url="admin:login").status_code == 429
