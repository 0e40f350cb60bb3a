from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import DEFAULT_PASSWORD

pytestmark = pytest.mark.django_db


def test_it_logs_in_with_email_and_password(client, cast):
    response = client.post(reverse("accounts:login"), {"username": "ALICE@example.com", "password": DEFAULT_PASSWORD})

    assert response.status_code == 302
    assert response.url == reverse("agents:list")
    assert client.session["_auth_user_id"] == str(cast.alice.pk)


def test_it_refuses_a_wrong_password(client, cast):
    response = client.post(reverse("accounts:login"), {"username": "alice@example.com", "password": "wrong"})

    assert response.status_code == 200
    assert "_auth_user_id" not in client.session


def test_it_returns_to_the_page_asked_for(client, cast):
    response = client.post(
        reverse("accounts:login") + "?next=/accounts/members/",
        {"username": "alice@example.com", "password": DEFAULT_PASSWORD, "next": "/accounts/members/"},
    )

    assert response.url == "/accounts/members/"


def test_it_sends_anonymous_visitors_to_the_login_page(client):
    response = client.get(reverse("accounts:members"))

    assert response.status_code == 302
    assert response.url.startswith(reverse("accounts:login"))


def test_it_logs_out_on_post_only(client, cast):
    client.force_login(cast.alice)

    assert client.get(reverse("accounts:logout")).status_code == 405
    response = client.post(reverse("accounts:logout"))

    assert response.status_code == 302
    assert response.url == reverse("accounts:login")
    assert "_auth_user_id" not in client.session


def test_it_shows_the_current_organization_and_navigation_in_the_header(client, cast):
    client.force_login(cast.alice)

    content = client.get(reverse("accounts:members")).content.decode()

    assert "Acme" in content
    assert reverse("accounts:api_keys") in content
    assert reverse("admin:index") not in content


def test_it_hides_the_api_keys_link_from_plain_members(client, cast):
    client.force_login(cast.bob)

    content = client.get(reverse("accounts:members")).content.decode()

    assert reverse("accounts:api_keys") not in content
