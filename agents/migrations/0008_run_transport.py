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
    ]
