"""Issue 14, item 15: the admin cannot move an agent, a tool or provider settings to another organization."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.urls import reverse

from accounts.models import ProviderSettings
from tests.factories import AgentFactory, ToolFactory, UserFactory

if TYPE_CHECKING:
    from tests.conftest import Cast


@pytest.fixture
def superuser_client(client, cast: Cast):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


@pytest.mark.parametrize("kind", ["agents.agent", "tools.tool", "accounts.providersettings"])
def test_the_admin_shows_no_editable_organization_on_an_existing_row(superuser_client, cast: Cast, kind: str):
    row = {
        "agents.agent": lambda: AgentFactory(organization=cast.org_a),
        "tools.tool": lambda: ToolFactory(organization=cast.org_a),
        "accounts.providersettings": lambda: ProviderSettings.objects.create(
            organization=cast.org_a, provider="openai"
        ),
    }[kind]()
    page = superuser_client.get(reverse(f"admin:{kind.replace('.', '_')}_change", args=[row.pk]))
    assert page.status_code == 200
    assert "organization" not in page.context["adminform"].form.fields


def test_posting_another_organization_to_provider_settings_leaves_them_where_they_were(superuser_client, cast: Cast):
    row = ProviderSettings.objects.create(organization=cast.org_a, provider="openai")
    superuser_client.post(
        reverse("admin:accounts_providersettings_change", args=[row.pk]),
        {"organization": cast.org_b.pk, "provider": "openai", "api_key": "", "base_url": ""},
    )
    row.refresh_from_db()
    assert row.organization == cast.org_a
