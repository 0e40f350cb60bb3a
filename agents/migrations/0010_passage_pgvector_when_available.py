"""Archival vectors in pgvector, where the database has the ``vector`` extension.

On Postgres with ``vector`` in ``pg_available_extensions`` (the compose file's image
ships it; Debian 12's Postgres 15 does not), this adds ``agents_passage.embedding_vector``
(a ``vector`` the trigger below keeps equal to the ``embedding`` JSON), and an HNSW
cosine index per embedding size we produce (256: the demo embedding; 1536: OpenAI's
``text-embedding-3-small`` and ``ada-002``), each an expression index over the rows of
that size. The column is not a model field: elsewhere (SQLite, Postgres without the
extension) the exact cosine of ``agents.memory.archival`` is the path.
"""

from django.db import DatabaseError, migrations, transaction

HNSW_DIMENSIONS = (256, 1536)
CREATE = (
    "ALTER TABLE agents_passage ADD COLUMN IF NOT EXISTS embedding_vector vector",
    """
    CREATE OR REPLACE FUNCTION agents_passage_embedding_vector() RETURNS trigger AS $$
    BEGIN
        IF NEW.embedding IS NULL OR jsonb_typeof(NEW.embedding) <> 'array' OR jsonb_array_length(NEW.embedding) = 0
        THEN NEW.embedding_vector := NULL;
        ELSE NEW.embedding_vector := NEW.embedding::text::vector;
        END IF;
        RETURN NEW;
    END
    $$ LANGUAGE plpgsql
    """,
    "DROP TRIGGER IF EXISTS agents_passage_embedding_vector ON agents_passage",
    "CREATE TRIGGER agents_passage_embedding_vector BEFORE INSERT OR UPDATE OF embedding ON agents_passage "
    "FOR EACH ROW EXECUTE FUNCTION agents_passage_embedding_vector()",
    "UPDATE agents_passage SET embedding = embedding WHERE embedding IS NOT NULL",
    *(
        f"CREATE INDEX IF NOT EXISTS passage_embedding_hnsw_{size} ON agents_passage "
        f"USING hnsw ((embedding_vector::vector({size})) vector_cosine_ops) WHERE vector_dims(embedding_vector) = {size}"
        for size in HNSW_DIMENSIONS
    ),
)
DROP = (
    "DROP TRIGGER IF EXISTS agents_passage_embedding_vector ON agents_passage",
    "DROP FUNCTION IF EXISTS agents_passage_embedding_vector()",
    "ALTER TABLE agents_passage DROP COLUMN IF EXISTS embedding_vector",
)


def vector_enabled(schema_editor) -> bool:
    """Whether ``vector`` is (or can now be) installed; a role that may not create it leaves the exact path."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT installed_version FROM pg_available_extensions WHERE name = 'vector'")
        row = cursor.fetchone()
    if row is None:
        return False
    if row[0] is not None:
        return True
    try:
        with transaction.atomic(using=connection.alias):
            schema_editor.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except DatabaseError:
        return False
    return True


def add_vectors(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql" or not vector_enabled(schema_editor):
        return
    for statement in CREATE:
        schema_editor.execute(statement)


def drop_vectors(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in DROP:
        schema_editor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ("agents", "0009_passage_fts5_on_sqlite"),
    ]

    operations = [
        migrations.RunPython(add_vectors, drop_vectors),
    ]
