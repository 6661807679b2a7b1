"""Tasks opened by a start marker (SPEC 9.1) wait in `otlp_open_task` for their span, or for the sweep to end them.

The table is keyed by tenant on PostgreSQL, as 0014 keys the others, and distributed by tenant on Citus,
co-located with `agent_task`.
"""

from tortoise import fields, migrations
from tortoise.migrations import operations as ops

from models.migrations._keyed import keyed_by_tenant

KEYED = {"otlp_open_task": "id"}


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
        keyed_by_tenant(KEYED),
    ]
