"""``AgentTool.requires_approval`` becomes ``approval_policy`` (+ ``approval_condition``): one source of truth."""

from django.db import migrations, models


def forwards(apps, schema_editor):
    AgentTool = apps.get_model("tools", "AgentTool")
    AgentTool.objects.filter(requires_approval=True).update(approval_policy="ask")
    AgentTool.objects.filter(requires_approval=False).update(approval_policy="allow")


def backwards(apps, schema_editor):
    AgentTool = apps.get_model("tools", "AgentTool")
    AgentTool.objects.filter(approval_policy__in=["ask", "ask_when"]).update(requires_approval=True)
    AgentTool.objects.filter(approval_policy="allow").update(requires_approval=False)


class Migration(migrations.Migration):
    dependencies = [("tools", "0002_tool_args_json_schema")]

    operations = [
        migrations.AddField(
            model_name="agenttool",
            name="approval_policy",
            field=models.CharField(
                choices=[
                    ("inherit", "Tool default"),
                    ("ask", "Always ask"),
                    ("allow", "Never ask"),
                    ("ask_when", "Ask when a condition holds"),
                ],
                default="inherit",
                help_text="Whether calls wait for a person: the tool's default, always, never, or when a condition holds.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="agenttool",
            name="approval_condition",
            field=models.TextField(
                blank=True,
                help_text="With \"ask when\": a rule over the call's arguments, e.g. amount > 100 or path startswith \"/etc\".",
            ),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.RemoveField(model_name="agenttool", name="requires_approval"),
    ]
