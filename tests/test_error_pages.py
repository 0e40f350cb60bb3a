"""The product's own error pages, as served with DEBUG off."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def production(settings):
    settings.DEBUG = False
    settings.ROOT_URLCONF = "tests.error_urls"
    return settings


def site_page(response) -> str:
    content = response.content.decode()
    assert 'class="site-header"' in content and "/static/css/app.css" in content
    return content


def test_a_missing_page_is_the_products_404_with_the_header_of_the_logged_in_person(client, cast, production):
    client.force_login(cast.alice)

    response = client.get("/no/such/page/")

    assert response.status_code == 404
    content = site_page(response)
    assert "Page not found" in content and cast.alice.email in content


def test_another_organizations_chat_is_the_products_404(client, cast, production):
    other = AgentFactory(organization=cast.org_b, name="Globex secret agent")
    client.force_login(cast.alice)

    response = client.get(reverse("agents:chat", kwargs={"agent_id": other.public_id}))

    assert response.status_code == 404
    content = site_page(response)
    assert "Page not found" in content and "Globex secret agent" not in content


@pytest.mark.parametrize(
    ("url", "status", "title"), [("/fail/400/", 400, "Bad request"), ("/fail/403/", 403, "Not allowed")]
)
def test_a_refused_request_gets_the_products_page(client, production, url, status, title):
    response = client.get(url)

    assert response.status_code == status
    assert title in site_page(response)


def test_a_server_error_is_the_products_500_and_shows_no_detail(production):
    client = Client(raise_request_exception=False)

    response = client.get("/fail/500/")

    assert response.status_code == 500
    content = site_page(response)
    assert "Something went wrong" in content and "secret detail" not in content


def test_a_form_sent_without_its_csrf_token_gets_the_form_expired_page(cast, production):
    client = Client(enforce_csrf_checks=True)

    response = client.post(reverse("accounts:login"), {"username": cast.alice.email, "password": "x"})

    assert response.status_code == 403
    assert "This form has expired" in site_page(response)
