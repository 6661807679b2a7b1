"""Indexes that serve "this task and everything under it" as one prefix match on the path.

PostgreSQL databases usually have a non-C collation, where a plain b-tree index does not
serve LIKE 'prefix%'; text_pattern_ops does. SQLite matches the prefix with GLOB, which a
plain index serves.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

INDEXES = (
    ("agent_task_path_prefix", "agent_task", "path"),
    ("llm_call_task_path_prefix", "llm_call", "task_path"),
)


async def create(apps, schema_editor) -> None:
    client = schema_editor.client
    pattern_ops = " text_pattern_ops" if client.capabilities.dialect == "postgres" else ""
    for name, table, column in INDEXES:
        await client.execute_script(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column}{pattern_ops})")


async def drop(apps, schema_editor) -> None:
    for name, _, _ in INDEXES:
        await schema_editor.client.execute_script(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("agentlog", "0001_initial")]

    operations = [ops.RunPython(create, drop)]
