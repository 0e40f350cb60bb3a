# ProviderSettings rows were copied into providers.Provider by providers 0002.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_approval_expiry"),
        ("providers", "0002_copy_provider_settings"),
    ]

    operations = [
        migrations.DeleteModel(name="ProviderSettings"),
    ]
