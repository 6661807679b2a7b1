"""Webhooks (SPEC 9.2): the `webhook` table, where a tenant's events are sent, and `webhook_delivery`, the outbox
each event owed to a webhook is written to in the transaction that caused it, kept as the delivery log.

Both tables are keyed by tenant on PostgreSQL, as 0014 keys the others, and distributed by tenant on Citus,
co-located with `agent_task`.
"""

from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops

from models.migrations._keyed import keyed_by_tenant

KEYED = {"webhook": "id", "webhook_delivery": "id"}


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0017_stop_asks')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Webhook',
            fields=[
                ('id', fields.UUIDField(primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('url', fields.TextField(unique=False)),
                ('events', fields.TextField(unique=False)),
                ('secret', fields.TextField(unique=False)),
                ('created_at', fields.DatetimeField()),
            ],
            options={'table': 'webhook', 'app': 'agentlog', 'pk_attr': 'id',
                     'indexes': [Index(fields=['tenant', 'created_at'])],
                     'table_description': 'Where a tenant\'s events are sent, and the secret they are signed with.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='WebhookDelivery',
            fields=[
                ('id', fields.UUIDField(primary_key=True, unique=True, db_index=True)),
                ('tenant', fields.CharField(max_length=200)),
                ('webhook_id', fields.UUIDField()),
                ('event', fields.CharField(max_length=64)),
                ('at', fields.DatetimeField()),
                ('body', fields.TextField(unique=False)),
                ('attempts', fields.IntField(default=0)),
                ('status', fields.IntField(null=True)),
                ('error', fields.TextField(null=True, unique=False)),
                ('delivered_at', fields.DatetimeField(null=True)),
                ('gave_up_at', fields.DatetimeField(null=True)),
                ('due_at', fields.DatetimeField(null=True)),
            ],
            options={'table': 'webhook_delivery', 'app': 'agentlog', 'pk_attr': 'id',
                     'indexes': [Index(fields=['tenant', 'webhook_id', 'at']), Index(fields=['due_at'])],
                     'table_description': 'One event owed to one webhook: the outbox and its delivery log.'},
            bases=['Model'],
        ),
        keyed_by_tenant(KEYED),
    ]
