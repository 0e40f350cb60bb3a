"""Issue 14, item 15: the admin cannot move an agent, a tool or a provider to another organization."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.urls import reverse

from providers.models import Provider
from tests.factories import AgentFactory, ToolFactory, UserFactory

if TYPE_CHECKING:
    from tests.conftest import Cast


@pytest.fixture
def superuser_client(client, cast: Cast):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


@pytest.mark.parametrize("kind", ["agents.agent", "tools.tool", "providers.provider"])
def test_the_admin_shows_no_editable_organization_on_an_existing_row(superuser_client, cast: Cast, kind: str):
    row = {
        "agents.agent": lambda: AgentFactory(organization=cast.org_a),
        "tools.tool": lambda: ToolFactory(organization=cast.org_a),
        "providers.provider": lambda: Provider.objects.create(
            organization=cast.org_a, name="openai", provider_type="openai"
        ),
    }[kind]()
    page = superuser_client.get(reverse(f"admin:{kind.replace('.', '_')}_change", args=[row.pk]))
    assert page.status_code == 200
    assert "organization" not in page.context["adminform"].form.fields


def test_posting_another_organization_to_a_provider_leaves_it_where_it_was(superuser_client, cast: Cast):
    row = Provider.objects.create(organization=cast.org_a, name="openai", provider_type="openai")
    superuser_client.post(
        reverse("admin:providers_provider_change", args=[row.pk]),
        {
            "organization": cast.org_b.pk,
            "name": "openai",
            "provider_type": "openai",
            "api_key": "",
            "base_url": "",
            "models-TOTAL_FORMS": "0",
            "models-INITIAL_FORMS": "0",
        },
    )
    row.refresh_from_db()
    assert row.organization == cast.org_a
