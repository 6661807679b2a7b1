"""Indexes that serve tasks(filter) newest first: each filter's column, then (started_at, id) for the keyset.

Roots only is served by a partial index over the tasks without a parent.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

ROOTS = "agent_task_roots"


async def create_roots(apps, schema_editor) -> None:
    await schema_editor.client.execute_script(
        f"CREATE INDEX IF NOT EXISTS {ROOTS} ON agent_task (tenant, started_at, id) WHERE parent_id IS NULL"
    )


async def drop_roots(apps, schema_editor) -> None:
    await schema_editor.client.execute_script(f"DROP INDEX IF EXISTS {ROOTS}")


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0002_path_prefix_indexes')]

    initial = False

    operations = [
        ops.RemoveIndex(
            model_name='AgentTask',
            name=None,
            fields=['tenant', 'agent', 'started_at'],
        ),
        ops.RemoveIndex(
            model_name='AgentTask',
            name=None,
            fields=['tenant', 'requester_id', 'started_at'],
        ),
        ops.RemoveIndex(
            model_name='AgentTask',
            name=None,
            fields=['tenant', 'session'],
        ),
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'agent', 'started_at', 'id']),
        ),
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'skill', 'started_at', 'id']),
        ),
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'status', 'started_at', 'id']),
        ),
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'requester_id', 'started_at', 'id']),
        ),
        ops.AddIndex(
            model_name='AgentTask',
            index=Index(fields=['tenant', 'session', 'started_at', 'id']),
        ),
        ops.RunPython(create_roots, drop_roots),
    ]
