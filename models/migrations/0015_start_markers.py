"""Tasks opened by a start marker (SPEC 9.1) wait in `otlp_open_task` for their span, or for the sweep to end them.

The table is keyed by tenant on PostgreSQL, as 0014 keys the others, and distributed by tenant on Citus,
co-located with `agent_task`.
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops

KEY = ('ALTER TABLE "otlp_open_task" DROP CONSTRAINT "otlp_open_task_pkey", '
       'ADD CONSTRAINT "otlp_open_task_pkey" PRIMARY KEY ("id", "tenant")')
DISTRIBUTE = "SELECT create_distributed_table('otlp_open_task', 'tenant', colocate_with => 'agent_task')"


async def key_by_tenant(apps, schema_editor) -> None:
    client = schema_editor.client
    if client.capabilities.dialect != "postgres":
        return
    await client.execute_script(KEY)
    if await client.execute_query_dict("SELECT 1 FROM pg_extension WHERE extname = 'citus'"):
        await client.execute_script(DISTRIBUTE)


async def nothing(apps, schema_editor) -> None:
    pass


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0014_keyed_by_tenant')]

    initial = False

    operations = [
        ops.CreateModel(
            name='OtlpOpenTask',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('trace_id', fields.CharField(max_length=32)),
                ('span_id', fields.CharField(max_length=16)),
                ('task_id', fields.UUIDField()),
                ('seen_us', fields.BigIntField(db_index=True)),
            ],
            options={'table': 'otlp_open_task', 'app': 'agentlog',
                     'unique_together': [('tenant', 'trace_id', 'span_id')], 'pk_attr': 'id',
                     'table_description': 'A task a start marker opened, waiting for its span.'},
            bases=['Model'],
        ),
        ops.RunPython(key_by_tenant, nothing),
    ]
