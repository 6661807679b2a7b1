from tortoise import fields
from tortoise.models import Model


class RegisteredAgent(Model):
    """An agent the kit registered in a tenant: the roles it holds and who may read its transcripts."""

    id = fields.IntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    name = fields.CharField(max_length=200)
    purpose = fields.TextField(null=True)
    roles = fields.JSONField(default=list)
    transcript_readers = fields.JSONField(default=list)
    logging = fields.CharField(max_length=16, default="FULL")

    class Meta:
        table = "agent"
        unique_together = (("tenant", "name"),)
