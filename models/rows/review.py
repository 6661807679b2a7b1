from tortoise import fields
from tortoise.models import Model


class Review(Model):
    """A verdict on one task, by a person or an evaluator; its REVIEWED line (`seq`) is the chained record of it."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    root_id = fields.UUIDField()
    task_id = fields.UUIDField()
    seq = fields.IntField()
    verdict = fields.CharField(max_length=16)
    score = fields.FloatField(null=True)
    note = fields.TextField(null=True)
    by_id = fields.CharField(max_length=200)
    by_name = fields.CharField(max_length=400, null=True)
    evaluator = fields.CharField(max_length=200, null=True)
    at = fields.DatetimeField()

    class Meta:
        table = "review"
        indexes = (("tenant", "task_id", "at"), ("tenant", "verdict"))
