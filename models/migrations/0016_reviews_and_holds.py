"""Reviews of work and legal holds on trees (SPEC 9.3): the `review` and `work_hold` tables, and two policies,
`holds_records` (who may hold) and `retention_basis` (why work is kept fewer days than the floor).

Both tables are keyed by tenant on PostgreSQL, as 0014 keys the others, and distributed by tenant on Citus,
co-located with `agent_task`.
"""

import functools
from json import dumps, loads

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops

from models.migrations._keyed import keyed_by_tenant

KEYED = {"review": "id", "work_hold": "root_id"}


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0015_start_markers')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Review',
            fields=[
                ('id', fields.UUIDField(primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('root_id', fields.UUIDField()),
                ('task_id', fields.UUIDField()),
                ('seq', fields.IntField()),
                ('verdict', fields.CharField(max_length=16)),
                ('score', fields.FloatField(null=True)),
                ('note', fields.TextField(null=True, unique=False)),
                ('by_id', fields.CharField(max_length=200)),
                ('by_name', fields.CharField(max_length=400, null=True)),
                ('evaluator', fields.CharField(max_length=200, null=True)),
                ('at', fields.DatetimeField()),
            ],
            options={'table': 'review', 'app': 'agentlog', 'pk_attr': 'id',
                     'indexes': [Index(fields=['tenant', 'task_id', 'at']), Index(fields=['tenant', 'verdict'])],
                     'table_description': 'A verdict on one task, by a person or an evaluator.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WorkHold',
            fields=[
                ('root_id', fields.UUIDField(primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('by_id', fields.CharField(max_length=200)),
                ('by_name', fields.CharField(max_length=400, null=True)),
                ('reason', fields.TextField(unique=False)),
                ('at', fields.DatetimeField()),
            ],
            options={'table': 'work_hold', 'app': 'agentlog', 'pk_attr': 'root_id',
                     'table_description': 'A legal hold on one tree, kept while it lasts.'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='TenantPolicies',
            name='retention_basis',
            field=fields.TextField(null=True, unique=False),
        ),
        ops.AddField(
            model_name='TenantPolicies',
            name='holds_records',
            field=fields.JSONField(default=list, encoder=functools.partial(dumps, separators=(',', ':')),
                                   decoder=loads),
        ),
        keyed_by_tenant(KEYED),
    ]
