import accounts.fields
from django.db import migrations, models


def encrypt_existing(apps, schema_editor):
    Agent = apps.get_model("agents", "Agent")
    for agent in Agent.objects.only("pk", "tool_env_vars").iterator():
        Agent.objects.filter(pk=agent.pk).update(tool_env_vars=agent.tool_env_vars)


def decrypt_existing(apps, schema_editor):
    Agent = apps.get_model("agents", "Agent")
    for agent in Agent.objects.only("pk", "tool_env_vars").iterator():
        plain = models.Value(agent.tool_env_vars, output_field=models.JSONField())
        Agent.objects.filter(pk=agent.pk).update(tool_env_vars=plain)


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0005_context_summary'),
    ]

    operations = [
        migrations.AlterField(
            model_name='agent',
            name='tool_env_vars',
            field=accounts.fields.EncryptedJSONField(blank=True, default=dict, help_text='The only environment variables its source tools see (encrypted at rest).'),
        ),
        migrations.RunPython(encrypt_existing, decrypt_existing),
    ]
