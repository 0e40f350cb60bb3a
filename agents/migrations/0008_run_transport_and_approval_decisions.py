"""How a run was asked for (the decisions' audit), and the approval rows seen as decisions (a proxy for the admin)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agents", "0007_approval_expiry")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="transport",
            field=models.CharField(
                choices=[("api", "REST API"), ("chat", "Browser chat"), ("expiry", "Approval expiry")],
                default="api",
                max_length=10,
            ),
        ),
        migrations.CreateModel(
            name="ApprovalDecision",
            fields=[],
            options={"verbose_name": "approval decision", "proxy": True, "indexes": [], "constraints": []},
            bases=("agents.message",),
        ),
    ]
