from tortoise import fields
from tortoise.models import Model


class IdempotencyKey(Model):
    """The first answer to a kit write that carried an idempotency key."""

    id = fields.IntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    key = fields.CharField(max_length=200)
    fingerprint = fields.CharField(max_length=64)
    result_id = fields.CharField(max_length=200)
    created_at = fields.DatetimeField(auto_now_add=True, null=True)

    class Meta:
        table = "idempotency_key"
        unique_together = (("tenant", "key"),)
        indexes = (("created_at",),)
