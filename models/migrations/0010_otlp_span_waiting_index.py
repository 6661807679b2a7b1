"""Spans waiting to be placed are found through a partial index that holds only them; a placed span is in no
index but its identity. The (tenant, trace_id, placed) index goes: the unique (tenant, trace_id, span_id) serves
every read of one trace."""

from tortoise import migrations
from tortoise.migrations import operations as ops

CREATE = 'CREATE INDEX "otlp_span_waiting" ON "otlp_span" ("received_us") WHERE NOT "placed"'
DROP = 'DROP INDEX IF EXISTS "otlp_span_waiting"'


async def create(apps, schema_editor) -> None:
    await schema_editor.client.execute_script(CREATE)


async def drop(apps, schema_editor) -> None:
    await schema_editor.client.execute_script(DROP)


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0009_retention')]

    initial = False

    operations = [
        ops.RemoveIndex(model_name='OtlpSpan', name=None, fields=['placed', 'received_us']),
        ops.RemoveIndex(model_name='OtlpSpan', name=None, fields=['tenant', 'trace_id', 'placed']),
        ops.RunPython(create, drop),
    ]
