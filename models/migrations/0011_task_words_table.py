"""On PostgreSQL a task's searchable words move from a generated column of `agent_task` to a narrow table.

Counting a search that matches many tasks tests the words of each match; in `agent_task` those sit in
wide rows, and the planner would rather read the whole table than visit a quarter of its pages. In
`task_words` (task id, tenant, words) the GIN index's matches are counted over a few small pages; the
words are kept without positions, which a search of plain words never reads. A trigger keeps the table
in the transaction of every write and erasure, as the generated column was kept; a task's row goes with
it. SQLite keeps its FTS5 tables of migration 0006, which are narrow already.
"""

from importlib import import_module

from tortoise import migrations
from tortoise.migrations import operations as ops

search = import_module("models.migrations.0006_task_filters_and_search")

KEEP = f"strip(to_tsvector('simple', {search.NEW_WORDS}))"

POSTGRES = [
    "CREATE TABLE IF NOT EXISTS task_words (task_id UUID PRIMARY KEY REFERENCES agent_task (id) ON DELETE CASCADE, "
    "tenant VARCHAR(200) NOT NULL, words TSVECTOR NOT NULL)",
    f"INSERT INTO task_words (task_id, tenant, words) SELECT id, tenant, strip(to_tsvector('simple', {search.WORDS})) "
    "FROM agent_task ON CONFLICT (task_id) DO NOTHING",
    "CREATE INDEX IF NOT EXISTS task_words_words ON task_words USING GIN (words)",
    f"""CREATE OR REPLACE FUNCTION task_words_keep() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO task_words (task_id, tenant, words) VALUES (new.id, new.tenant, {KEEP})
        ON CONFLICT (task_id) DO UPDATE SET words = excluded.words;
        RETURN NULL;
    END $$""",
    "DROP TRIGGER IF EXISTS task_words_insert ON agent_task",
    "CREATE TRIGGER task_words_insert AFTER INSERT ON agent_task FOR EACH ROW EXECUTE FUNCTION task_words_keep()",
    "DROP TRIGGER IF EXISTS task_words_update ON agent_task",
    """CREATE TRIGGER task_words_update AFTER UPDATE OF about, "trigger", outcome ON agent_task FOR EACH ROW
    WHEN (old.about IS DISTINCT FROM new.about OR old."trigger" IS DISTINCT FROM new."trigger"
          OR old.outcome IS DISTINCT FROM new.outcome)
    EXECUTE FUNCTION task_words_keep()""",
    "ALTER TABLE agent_task DROP COLUMN IF EXISTS search_words",
]

DROP_POSTGRES = [
    "DROP TRIGGER IF EXISTS task_words_insert ON agent_task",
    "DROP TRIGGER IF EXISTS task_words_update ON agent_task",
    "DROP FUNCTION IF EXISTS task_words_keep()",
    "DROP TABLE IF EXISTS task_words",
    f"ALTER TABLE agent_task ADD COLUMN IF NOT EXISTS search_words tsvector "
    f"GENERATED ALWAYS AS (to_tsvector('simple', {search.WORDS})) STORED",
    "CREATE INDEX IF NOT EXISTS agent_task_search_words ON agent_task USING GIN (search_words)",
]


async def _run(schema_editor, statements: list[str]) -> None:
    client = schema_editor.client
    if client.capabilities.dialect == "postgres":
        for statement in statements:
            await client.execute_script(statement)


async def create(apps, schema_editor) -> None:
    await _run(schema_editor, POSTGRES)


async def drop(apps, schema_editor) -> None:
    await _run(schema_editor, DROP_POSTGRES)


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0010_otlp_span_waiting_index')]

    initial = False

    operations = [ops.RunPython(create, drop)]
