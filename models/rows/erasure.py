from tortoise import fields
from tortoise.models import Model


class ErasureRecord(Model):
    """The erasure log: who erased what, when, why, and how many lines."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    kind = fields.CharField(max_length=32)
    root_id = fields.UUIDField(null=True)
    task_id = fields.UUIDField(null=True)
    help_id = fields.UUIDField(null=True)
    why = fields.TextField(null=True)
    by_id = fields.CharField(max_length=200)
    by_name = fields.CharField(max_length=400, null=True)
    at = fields.DatetimeField()
    lines = fields.IntField()

    class Meta:
        table = "erasure_log"
        indexes = (("tenant", "at"),)
