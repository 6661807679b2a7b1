from tortoise import fields
from tortoise.models import Model


class SignedCheckpoint(Model):
    """The latest signed note over one tree's head. Its size only grows; one size is signed with one head."""

    root_id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    size = fields.IntField()
    head = fields.CharField(max_length=64)
    note = fields.TextField()

    class Meta:
        table = "checkpoint"
