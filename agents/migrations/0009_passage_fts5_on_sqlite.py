"""Archival full text on SQLite: an FTS5 table kept in step with ``agents_passage`` by triggers.

Postgres has its GIN index (migration 0004) and needs nothing here. The FTS5 table holds
each passage's id (unindexed) and its text, stemmed as Postgres' ``english``
configuration does (``porter``); ``agents.memory.archival`` ranks matches with ``bm25``.
"""

from django.db import migrations

FTS_TABLE = "agents_passage_fts"
CREATE = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
    "passage_id UNINDEXED, text, tokenize = 'porter unicode61 remove_diacritics 2')",
    f"CREATE TRIGGER IF NOT EXISTS agents_passage_fts_insert AFTER INSERT ON agents_passage BEGIN "
    f"INSERT INTO {FTS_TABLE} (passage_id, text) VALUES (new.id, new.text); END",
    f"CREATE TRIGGER IF NOT EXISTS agents_passage_fts_delete AFTER DELETE ON agents_passage BEGIN "
    f"DELETE FROM {FTS_TABLE} WHERE passage_id = old.id; END",
    f"CREATE TRIGGER IF NOT EXISTS agents_passage_fts_update AFTER UPDATE OF text ON agents_passage BEGIN "
    f"DELETE FROM {FTS_TABLE} WHERE passage_id = old.id; "
    f"INSERT INTO {FTS_TABLE} (passage_id, text) VALUES (new.id, new.text); END",
    f"INSERT INTO {FTS_TABLE} (passage_id, text) SELECT id, text FROM agents_passage",
)
DROP = (
    "DROP TRIGGER IF EXISTS agents_passage_fts_insert",
    "DROP TRIGGER IF EXISTS agents_passage_fts_delete",
    "DROP TRIGGER IF EXISTS agents_passage_fts_update",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
)


def create_fts(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in CREATE:
        schema_editor.execute(statement)


def drop_fts(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in DROP:
        schema_editor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0008_run_transport_and_approval_decisions"),
    ]

    operations = [
        migrations.RunPython(create_fts, drop_fts),
    ]
