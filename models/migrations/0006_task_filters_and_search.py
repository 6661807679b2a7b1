"""Indexes for the task filters and orders, and the search index over words and sentences.

Search is kept by the database in the transaction of every write and erasure: on PostgreSQL a generated
`tsvector` column with a GIN index on `agent_task` (about, trigger, outcome) and on `trace_event`
(summary); on SQLite two FTS5 tables kept by triggers: `task_words` (its rowids handed out by
`task_search`, since a task's id is not an integer) and `line_words` (an external-content table over
`trace_event`, whose integer id is its rowid).
"""

from tortoise import migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops

WORDS = "coalesce(about, '') || ' ' || coalesce(\"trigger\", '') || ' ' || coalesce(outcome, '')"

POSTGRES = [
    "CREATE INDEX IF NOT EXISTS agent_task_ended ON agent_task (tenant, ended_at DESC NULLS LAST, id DESC)",
    f"ALTER TABLE agent_task ADD COLUMN IF NOT EXISTS search_words tsvector "
    f"GENERATED ALWAYS AS (to_tsvector('simple', {WORDS})) STORED",
    "CREATE INDEX IF NOT EXISTS agent_task_search_words ON agent_task USING GIN (search_words)",
    "ALTER TABLE trace_event ADD COLUMN IF NOT EXISTS search_words tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple', coalesce(summary, ''))) STORED",
    "CREATE INDEX IF NOT EXISTS trace_event_search_words ON trace_event USING GIN (search_words)",
]

NEW_WORDS = WORDS.replace("about", "new.about").replace('"trigger"', 'new."trigger"').replace("outcome", "new.outcome")

SQLITE = [
    "CREATE INDEX IF NOT EXISTS agent_task_ended ON agent_task (tenant, ended_at, id)",
    "CREATE TABLE IF NOT EXISTS task_search (rowid INTEGER PRIMARY KEY, task_id CHAR(36) NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS task_words USING fts5(task_id UNINDEXED, words)",
    "INSERT INTO task_search (task_id) SELECT id FROM agent_task",
    f"INSERT INTO task_words (rowid, task_id, words) SELECT s.rowid, s.task_id, {WORDS} "
    "FROM agent_task JOIN task_search s ON s.task_id = agent_task.id",
    f"""CREATE TRIGGER IF NOT EXISTS task_words_insert AFTER INSERT ON agent_task BEGIN
        INSERT INTO task_search (task_id) VALUES (new.id);
        INSERT INTO task_words (rowid, task_id, words)
            VALUES ((SELECT rowid FROM task_search WHERE task_id = new.id), new.id, {NEW_WORDS});
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS task_words_update AFTER UPDATE OF about, "trigger", outcome ON agent_task
    WHEN old.about IS NOT new.about OR old."trigger" IS NOT new."trigger" OR old.outcome IS NOT new.outcome BEGIN
        UPDATE task_words SET words = {NEW_WORDS} WHERE rowid = (SELECT rowid FROM task_search WHERE task_id = new.id);
    END""",
    """CREATE TRIGGER IF NOT EXISTS task_words_delete AFTER DELETE ON agent_task BEGIN
        DELETE FROM task_words WHERE rowid = (SELECT rowid FROM task_search WHERE task_id = old.id);
        DELETE FROM task_search WHERE task_id = old.id;
    END""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS line_words USING fts5(summary, content='trace_event', content_rowid='id')",
    "INSERT INTO line_words (line_words) VALUES ('rebuild')",
    """CREATE TRIGGER IF NOT EXISTS line_words_insert AFTER INSERT ON trace_event BEGIN
        INSERT INTO line_words (rowid, summary) VALUES (new.id, new.summary);
    END""",
    """CREATE TRIGGER IF NOT EXISTS line_words_update AFTER UPDATE OF summary ON trace_event
    WHEN old.summary IS NOT new.summary BEGIN
        INSERT INTO line_words (line_words, rowid, summary) VALUES ('delete', old.id, old.summary);
        INSERT INTO line_words (rowid, summary) VALUES (new.id, new.summary);
    END""",
    """CREATE TRIGGER IF NOT EXISTS line_words_delete AFTER DELETE ON trace_event BEGIN
        INSERT INTO line_words (line_words, rowid, summary) VALUES ('delete', old.id, old.summary);
    END""",
]

DROP_POSTGRES = [
    "DROP INDEX IF EXISTS agent_task_ended",
    "ALTER TABLE agent_task DROP COLUMN IF EXISTS search_words",
    "ALTER TABLE trace_event DROP COLUMN IF EXISTS search_words",
]

DROP_SQLITE = [
    "DROP INDEX IF EXISTS agent_task_ended",
    *(f"DROP TRIGGER IF EXISTS {name}" for name in (
        "task_words_insert", "task_words_update", "task_words_delete",
        "line_words_insert", "line_words_update", "line_words_delete",
    )),
    "DROP TABLE IF EXISTS task_words",
    "DROP TABLE IF EXISTS task_search",
    "DROP TABLE IF EXISTS line_words",
]


async def _run(schema_editor, postgres: list[str], sqlite: list[str]) -> None:
    client = schema_editor.client
    for statement in postgres if client.capabilities.dialect == "postgres" else sqlite:
        await client.execute_script(statement)


async def create(apps, schema_editor) -> None:
    await _run(schema_editor, POSTGRES, SQLITE)


async def drop(apps, schema_editor) -> None:
    await _run(schema_editor, DROP_POSTGRES, DROP_SQLITE)


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0005_columns_hold_what_checks_accept')]

    initial = False

    operations = [
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'entity_type', 'started_at', 'id']),
        ),
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'entity_id', 'started_at', 'id']),
        ),
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'workflow_run', 'started_at', 'id']),
        ),
        ops.RemoveIndex(
            model_name='LlmCall',
            name=None,
            fields=['tenant', 'model'],
        ),
        ops.AddIndex(
            model_name='LlmCall',
            index=Index(fields=['tenant', 'model', 'task_id']),
        ),
        ops.RunPython(create, drop),
    ]
