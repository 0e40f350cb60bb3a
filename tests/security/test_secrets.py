"""Issue 14, item 13: a separate field-encryption key, required in production, that can be rotated;
agents' tool variables encrypted at rest and masked."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from django.core.management import call_command
from django.db.models import TextField
from django.db.models.functions import Cast as SqlCast
from django.urls import reverse

from agents.models import Agent
from providers.models import Provider
from tests.accounts.test_settings_switch import load_settings
from tests.factories import AgentFactory, UserFactory

if TYPE_CHECKING:
    from tests.conftest import Cast


def test_the_server_refuses_to_start_without_a_field_encryption_key_when_debug_is_off():
    result = load_settings(SECRET_KEY="x" * 50)
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEY" in result.stderr


def _stored_credentials(provider: Provider) -> str:
    return Provider.objects.filter(pk=provider.pk).values_list(SqlCast("credentials", TextField()), flat=True).get()


def test_stored_keys_survive_a_key_rotation_with_the_reencrypt_command(cast: Cast, settings):
    settings.FIELD_ENCRYPTION_KEY = "old-field-key"
    row = Provider(organization=cast.org_a, name="openai", provider_type="openai")
    row.api_key = "sk-org-secret"
    row.save()
    before = _stored_credentials(row)
    assert "sk-org-secret" not in before

    settings.FIELD_ENCRYPTION_KEY = "new-field-key,old-field-key"
    assert Provider.objects.get(pk=row.pk).api_key == "sk-org-secret"
    output = io.StringIO()
    call_command("reencrypt_secrets", stdout=output)
    assert "Re-encrypted 1 secret(s)" in output.getvalue()

    settings.FIELD_ENCRYPTION_KEY = "new-field-key"
    rotated = Provider.objects.get(pk=row.pk)
    assert _stored_credentials(rotated) != before
    assert rotated.api_key == "sk-org-secret"


def test_an_agents_tool_variables_are_encrypted_at_rest_and_masked_in_the_admin(cast: Cast, client):
    agent = AgentFactory(organization=cast.org_a, tool_env_vars={"API_TOKEN": "s3cret-tool-value"})
    stored = Agent.objects.filter(pk=agent.pk).values_list(SqlCast("tool_env_vars", TextField()), flat=True).get()
    assert "s3cret-tool-value" not in stored
    assert "API_TOKEN" not in stored
    assert Agent.objects.get(pk=agent.pk).tool_env_vars == {"API_TOKEN": "s3cret-tool-value"}

    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get(reverse("admin:agents_agent_change", args=[agent.pk])).content.decode()
    assert "API_TOKEN=••••" in page
    assert "s3cret-tool-value" not in page
