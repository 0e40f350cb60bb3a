from __future__ import annotations

import pytest
from django.test import Client
from django.urls import include, path, reverse
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import organization_of
from accounts.models import ApiKey
from tests.factories import api_key_for

pytestmark = pytest.mark.django_db


class WhoAmI(APIView):
    """Uses the project's default authentication and permission classes."""

    def get(self, request):
        return Response({"organization": organization_of(request).slug})


urlpatterns = [path("whoami/", WhoAmI.as_view()), path("", include("config.urls"))]


def create_key(client: Client, name: str = "ci") -> tuple[ApiKey, str, str]:
    response = client.post(reverse("accounts:api_keys"), {"name": name})
    assert response.status_code == 201
    key = ApiKey.objects.get(name=name)
    return key, response.context["raw_key"], response.content.decode()


def test_it_creates_a_key_and_shows_it_once(client, cast):
    client.force_login(cast.alice)

    key, raw, page = create_key(client)

    assert raw in page
    assert raw.startswith(key.prefix)
    assert (key.organization, key.created_by, key.revoked_at) == (cast.org_a, cast.alice, None)
    listing = client.get(reverse("accounts:api_keys")).content.decode()
    assert key.prefix in listing
    assert raw not in listing


def test_it_never_caches_the_page_that_shows_the_key(client, cast):
    client.force_login(cast.alice)

    response = client.post(reverse("accounts:api_keys"), {"name": "ci"})

    assert "no-store" in response["Cache-Control"]


@pytest.mark.urls(__name__)
def test_it_authenticates_with_the_new_key_until_it_is_revoked(client, cast):
    client.force_login(cast.alice)
    key, raw, _ = create_key(client)
    api = Client()

    ok = api.get("/whoami/", headers={"Authorization": f"Bearer {raw}"})
    assert (ok.status_code, ok.json()) == (200, {"organization": "acme"})

    client.post(reverse("accounts:api_key_revoke", kwargs={"pk": key.pk}))

    key.refresh_from_db()
    assert key.revoked_at is not None
    refused = api.get("/whoami/", headers={"Authorization": f"Bearer {raw}"})
    assert refused.status_code == 401


@pytest.mark.urls(__name__)
@pytest.mark.parametrize(
    ("header", "status"),
    [(None, 401), ("Bearer", 401), ("Bearer sk-agent-not-a-key", 401), ("Basic dXNlcjpwYXNz", 401)],
)
def test_it_refuses_missing_malformed_and_unknown_keys(cast, header, status):
    headers = {"Authorization": header} if header else {}

    response = Client().get("/whoami/", headers=headers)

    assert response.status_code == status


@pytest.mark.urls(__name__)
def test_it_records_when_a_key_was_last_used(cast):
    key, raw = api_key_for(cast.org_a, cast.alice)

    Client().get("/whoami/", headers={"Authorization": f"Bearer {raw}"})

    key.refresh_from_db()
    assert key.last_used_at is not None


def test_it_lists_last_use_and_revoked_keys(client, cast):
    api_key_for(cast.org_a, cast.alice, name="used-key")
    revoked, _ = api_key_for(cast.org_a, cast.alice, name="revoked-key")
    revoked.revoke()
    client.force_login(cast.alice)

    content = client.get(reverse("accounts:api_keys")).content.decode()

    assert "used-key" in content
    assert "Revoked" in content
    assert "never" in content


def test_it_refuses_key_management_to_plain_members(client, cast):
    client.force_login(cast.bob)
    key, _ = api_key_for(cast.org_a, cast.alice)

    assert client.get(reverse("accounts:api_keys")).status_code == 403
    assert client.post(reverse("accounts:api_keys"), {"name": "mine"}).status_code == 403
    assert client.post(reverse("accounts:api_key_revoke", kwargs={"pk": key.pk})).status_code == 403
    assert ApiKey.objects.active().count() == 1


def test_it_rejects_other_org(client, cast):
    key, _ = api_key_for(cast.org_b, cast.charlie, name="globex-key")
    client.force_login(cast.alice)

    response = client.post(reverse("accounts:api_key_revoke", kwargs={"pk": key.pk}))

    assert response.status_code == 404
    key.refresh_from_db()
    assert key.revoked_at is None
    assert "globex-key" not in client.get(reverse("accounts:api_keys")).content.decode()
