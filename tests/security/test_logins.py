"""Issues 14 and 23: failed logins are throttled per (account, address), on the site and the admin.

A pair is locked after ``AXES_FAILURE_LIMIT`` failures; an address alone only far above that, so
neither a guess at someone's email nor a colleague behind the same NAT locks anyone else out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from axes.models import AccessAttempt
from django.urls import reverse

from tests.factories import DEFAULT_PASSWORD, UserFactory

if TYPE_CHECKING:
    from tests.conftest import Cast

OFFICE = "203.0.113.7"


@pytest.fixture
def low_limit(settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 6
    return settings


def _login(client, email: str, password: str, *, address: str = OFFICE, url: str = "accounts:login"):
    return client.post(reverse(url), {"username": email, "password": password}, REMOTE_ADDR=address)


def test_an_account_is_locked_from_one_address_after_repeated_failures_even_with_the_right_password(
    client, cast: Cast, low_limit
):
    answers = [_login(client, cast.alice.email, f"wrong-{n}").status_code for n in range(3)]
    assert answers == [200, 200, 429]  # the third failure reaches the limit
    locked = _login(client, cast.alice.email, DEFAULT_PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "Try again in 15 minutes" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_ten_failures_on_one_account_do_not_stop_another_account_logging_in_from_that_address(client, cast: Cast):
    for attempt in range(10):
        _login(client, cast.alice.email, f"wrong-{attempt}")
    assert _login(client, cast.alice.email, DEFAULT_PASSWORD).status_code == 429

    answer = _login(client, cast.bob.email, DEFAULT_PASSWORD)

    assert answer.status_code == 302
    assert client.session["_auth_user_id"] == str(cast.bob.pk)


def test_failures_from_elsewhere_do_not_block_the_account_owner(client, cast: Cast, low_limit):
    for n in range(3):
        _login(client, cast.alice.email, f"wrong-{n}", address="198.51.100.66")

    assert _login(client, cast.alice.email, DEFAULT_PASSWORD, address=OFFICE).status_code == 302


def test_an_address_alone_is_locked_only_far_above_the_pair_limit(client, cast: Cast, low_limit):
    for email in ("nobody1@example.com", "nobody2@example.com", "nobody3@example.com"):
        _login(client, email, "guess")
    assert _login(client, cast.bob.email, DEFAULT_PASSWORD).status_code == 302  # 3 failures: below the bar
    client.logout()
    for email in ("nobody4@example.com", "nobody5@example.com", "nobody6@example.com"):
        _login(client, email, "guess")

    assert _login(client, cast.bob.email, DEFAULT_PASSWORD).status_code == 429  # 6: the address is locked
    assert _login(client, cast.bob.email, DEFAULT_PASSWORD, address="192.0.2.10").status_code == 302


def test_the_admin_login_is_locked_out_too(client, cast: Cast, low_limit):
    cast.alice.is_staff = True
    cast.alice.save(update_fields=["is_staff"])
    for attempt in range(3):
        _login(client, cast.alice.email, f"wrong-{attempt}", url="admin:login")
    assert _login(client, cast.alice.email, DEFAULT_PASSWORD, url="admin:login").status_code == 429


def test_a_superuser_sees_and_clears_a_lockout_in_the_admin(client, cast: Cast, low_limit):
    for n in range(3):
        _login(client, cast.alice.email, f"wrong-{n}")
    admin = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(admin)
    attempt = AccessAttempt.objects.get(username=cast.alice.email)

    listing = client.get(reverse("admin:axes_accessattempt_changelist"))
    assert cast.alice.email in listing.content.decode()
    client.post(reverse("admin:axes_accessattempt_delete", args=[attempt.pk]), {"post": "yes"})
    client.logout()

    assert not AccessAttempt.objects.exists()
    assert _login(client, cast.alice.email, DEFAULT_PASSWORD).status_code == 302
