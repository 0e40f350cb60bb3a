"""Every organization's ``accounts.ProviderSettings`` row becomes a provider of the same name.

The name is the one its handles used (``anthropic``, ``openai``), so agents on
``anthropic/…`` and ``openai/…`` handles keep working; the key (decrypted from the old
column, encrypted again by ``EncryptedJSONField``) and the base URL come along. A row with
neither a key nor a base URL held nothing and is left out: the server's own provider of
that name answers its handles, as before. A key no ``FIELD_ENCRYPTION_KEY`` opens stops
the migration (``ValueError``) rather than being dropped.
"""

from django.db import migrations

from accounts.crypto import decrypt_secret


def copy_provider_settings(apps, schema_editor):
    ProviderSettings = apps.get_model("accounts", "ProviderSettings")
    Provider = apps.get_model("providers", "Provider")
    for row in ProviderSettings.objects.all().order_by("pk"):
        api_key = decrypt_secret(row.api_key_encrypted)
        if not api_key and not row.base_url:
            continue
        Provider.objects.update_or_create(
            organization_id=row.organization_id,
            name=row.provider,
            defaults={
                "provider_type": row.provider,
                "category": "byok",
                "base_url": row.base_url,
                "credentials": {"api_key": api_key} if api_key else {},
            },
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_approval_expiry"),
        ("providers", "0001_initial"),
    ]

    operations = [migrations.RunPython(copy_provider_settings, migrations.RunPython.noop)]
