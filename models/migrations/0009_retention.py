from tortoise import fields, migrations
from tortoise.indexes import Index
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('agentlog', '0008_checkpoint')]

    initial = False

    operations = [
        ops.AddField(
            model_name='TenantPolicies',
            name='retain_days',
            field=fields.IntField(null=True),
        ),
        ops.AddField(
            model_name='IdempotencyKey',
            name='created_at',
            field=fields.DatetimeField(auto_now_add=True, null=True),
        ),
        ops.RunSQL("UPDATE idempotency_key SET created_at = CURRENT_TIMESTAMP WHERE created_at IS NULL"),
        ops.AddIndex(
            model_name='IdempotencyKey',
            index=Index(fields=['created_at']),
        ),
    ]
