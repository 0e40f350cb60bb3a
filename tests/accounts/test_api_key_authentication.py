from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import ApiKey
from tests.factories import api_key_for


@pytest.mark.django_db
def test_it_stores_only_a_hash_of_the_key(cast):
    key, raw = api_key_for(cast.org_a, cast.alice)
    stored = ApiKey.objects.get(pk=key.pk)
    assert raw not in (stored.key_hash, stored.prefix)
    assert raw.startswith(stored.prefix)


@pytest.mark.django_db
def test_health_needs_no_key(client: Client):
    response = client.get("/v1/health/")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
