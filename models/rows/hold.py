from tortoise import fields
from tortoise.models import Model


class WorkHold(Model):
    """A legal hold on one tree, kept while it lasts: its HELD line is the chained record of it, its RELEASED line
    of its end."""

    root_id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    by_id = fields.CharField(max_length=200)
    by_name = fields.CharField(max_length=400, null=True)
    reason = fields.TextField()
    at = fields.DatetimeField()

    class Meta:
        table = "work_hold"
