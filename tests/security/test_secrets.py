"""Issue 14, item 13: a separate field-encryption key, required in production, that can be rotated."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from django.core.management import call_command

from accounts.models import ProviderSettings
from tests.accounts.test_settings_switch import load_settings

if TYPE_CHECKING:
    from tests.conftest import Cast


def test_the_server_refuses_to_start_without_a_field_encryption_key_when_debug_is_off():
    result = load_settings(SECRET_KEY="x" * 50)
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEY" in result.stderr


def test_stored_keys_survive_a_key_rotation_with_the_reencrypt_command(cast: Cast, settings):
    settings.FIELD_ENCRYPTION_KEY = "old-field-key"
    row = ProviderSettings(organization=cast.org_a, provider="openai")
    row.api_key = "sk-org-secret"
    row.save()
    before = row.api_key_encrypted

    settings.FIELD_ENCRYPTION_KEY = "new-field-key,old-field-key"
    assert ProviderSettings.objects.get(pk=row.pk).api_key == "sk-org-secret"
    output = io.StringIO()
    call_command("reencrypt_secrets", stdout=output)
    assert "Re-encrypted 1 secret(s)" in output.getvalue()

    settings.FIELD_ENCRYPTION_KEY = "new-field-key"
    rotated = ProviderSettings.objects.get(pk=row.pk)
    assert rotated.api_key_encrypted != before
    assert rotated.api_key == "sk-org-secret"
