"""What `usage` reads, by time: a tenant's model calls in a range of `at`, and its tasks that ended FAILED in a
range of `ended_at`. Without these, every grouping scanned the whole meter, and read every failed task's row.

On PostgreSQL each index also carries the columns `usage` groups by and sums (INCLUDE), so a range is read from
the index alone; on Citus it is made on every shard. SQLite has no INCLUDE and keeps the key columns.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

INDEXES = (
    ("llm_call_tenant_at", "llm_call (tenant, at)", "agent, model, task_id, cost_micros, input_tokens, output_tokens",
     ""),
    ("agent_task_failed_ended", "agent_task (tenant, ended_at)", "id, agent, skill, requester_id",
     " WHERE status = 'FAILED'"),
)


async def create(apps, schema_editor) -> None:
    client = schema_editor.client
    postgres = client.capabilities.dialect == "postgres"
    for name, key, carried, where in INDEXES:
        include = f" INCLUDE ({carried})" if postgres else ""
        await client.execute_script(f"CREATE INDEX IF NOT EXISTS {name} ON {key}{include}{where}")


async def drop(apps, schema_editor) -> None:
    for name, _, _, _ in INDEXES:
        await schema_editor.client.execute_script(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("agentlog", "0018_webhooks")]

    operations = [ops.RunPython(create, drop)]
