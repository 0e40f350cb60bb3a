"""``Agent.setup_revision``, and on Postgres the triggers that bump it (issue 24).

A turn reads, besides its window, the agent's tools, its provider and its memory section;
``agents.runs.setup_cache`` keeps those reads in each process under the agent's
``setup_revision``, which the start's row-lock query reads anyway. Triggers bump it in the
transaction of every write that changes what those reads would return, whoever writes (any
process, the admin, a bulk update, raw SQL): the cache never serves a stale read. Each trigger
fires once per statement and bumps each agent concerned once. Elsewhere (SQLite) there are no
triggers, and the cache is not used.
"""

from django.db import migrations, models

FUNCTION = """
CREATE OR REPLACE FUNCTION agents_setup_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    agents text;
BEGIN
    -- TG_ARGV[0]: a query of the ids of the agents concerned, from the transition table named %1$s.
    IF TG_OP = 'INSERT' THEN
        agents := format(TG_ARGV[0], 'setup_new');
    ELSIF TG_OP = 'DELETE' THEN
        agents := format(TG_ARGV[0], 'setup_old');
    ELSE
        agents := format(TG_ARGV[0], 'setup_new') || ' UNION ' || format(TG_ARGV[0], 'setup_old');
    END IF;
    -- Lock the rows in id order first: two statements bumping the same agents never deadlock.
    EXECUTE 'SELECT 1 FROM {agent} WHERE {agent_pk} IN (' || agents || ') ORDER BY {agent_pk} FOR NO KEY UPDATE';
    EXECUTE 'UPDATE {agent} SET {revision} = {revision} + 1 WHERE {agent_pk} IN (' || agents || ')';
    RETURN NULL;
END
$$;
"""

TRIGGER = """
CREATE TRIGGER agents_setup_{event}_{table} AFTER {event} ON {table}
REFERENCING {tables} FOR EACH STATEMENT EXECUTE FUNCTION agents_setup_changed(%s);
"""

TRANSITION_TABLES = {
    "insert": "NEW TABLE AS setup_new",
    "update": "OLD TABLE AS setup_old NEW TABLE AS setup_new",
    "delete": "OLD TABLE AS setup_old",
}


def _sources(apps):
    """Each table whose writes concern agents: the events that do, and the query of their agents."""
    agent = apps.get_model("agents", "Agent")._meta.db_table
    agent_tool = apps.get_model("tools", "AgentTool")._meta.db_table
    agent_block = apps.get_model("agents", "AgentBlock")._meta.db_table
    by_agent = "SELECT agent_id FROM %1$s"
    every = ("insert", "update", "delete")
    return [
        (agent_tool, every, by_agent),
        (
            apps.get_model("tools", "Tool")._meta.db_table,
            ("update", "delete"),
            f"SELECT l.agent_id FROM {agent_tool} l JOIN %1$s r ON l.tool_id = r.id",
        ),
        (agent_block, every, by_agent),
        (
            apps.get_model("agents", "Block")._meta.db_table,
            ("update", "delete"),
            f"SELECT l.agent_id FROM {agent_block} l JOIN %1$s r ON l.block_id = r.id",
        ),
        (apps.get_model("agents", "Passage")._meta.db_table, every, by_agent),
        (apps.get_model("agents", "Message")._meta.db_table, ("delete",), by_agent),
        (apps.get_model("folders", "FolderAgent")._meta.db_table, every, by_agent),
        (
            apps.get_model("providers", "Provider")._meta.db_table,
            every,
            f"SELECT a.id FROM {agent} a JOIN %1$s r ON a.organization_id = r.organization_id",
        ),
    ]


def create_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    agent = apps.get_model("agents", "Agent")._meta.db_table
    schema_editor.execute(FUNCTION.format(agent=agent, revision="setup_revision", agent_pk="id"), None)
    for table, events, agents in _sources(apps):
        for event in events:
            sql = TRIGGER.format(event=event, table=table, tables=TRANSITION_TABLES[event])
            schema_editor.execute(sql, [agents])


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, events, _ in _sources(apps):
        for event in events:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS agents_setup_{event}_{table} ON {table}")
    schema_editor.execute("DROP FUNCTION IF EXISTS agents_setup_changed()")


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0017_message_images"),
        ("tools", "0004_tool_kind_mcp"),
        ("providers", "0002_copy_provider_settings"),
        ("folders", "0002_file_processing_started_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="setup_revision",
            field=models.PositiveBigIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
