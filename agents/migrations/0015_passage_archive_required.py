"""Every passage is in an archive (0014 moved the existing ones into their agents' own archives).

On SQLite, altering the column rebuilds ``agents_passage`` and drops the FTS5 triggers of
migration 0009 with the old table: they are made again here (the FTS5 rows themselves stay).
"""

import importlib

import django.db.models.deletion
from django.db import migrations, models

restore_fts_triggers = importlib.import_module("agents.migrations.0014_archives").restore_fts_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0014_archives"),
    ]

    operations = [
        migrations.AlterField(
            model_name="passage",
            name="archive",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="passages", to="agents.archive"
            ),
        ),
        migrations.RunPython(restore_fts_triggers, migrations.RunPython.noop),
    ]
