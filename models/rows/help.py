from tortoise import fields
from tortoise.models import Model


class AgentHelp(Model):
    """A question an agent asked a person, inside a piece of work or outside any."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    task_id = fields.UUIDField(null=True)
    root_id = fields.UUIDField(null=True)
    question = fields.TextField(null=True)
    asked_of_id = fields.CharField(max_length=200, null=True)
    asked_of_name = fields.CharField(max_length=400, null=True)
    asked_at = fields.DatetimeField()
    answer = fields.TextField(null=True)
    answered_by_id = fields.CharField(max_length=200, null=True)
    answered_by_name = fields.CharField(max_length=400, null=True)
    answered_at = fields.DatetimeField(null=True)
    withheld = fields.CharField(max_length=16, null=True)
    erased_at = fields.DatetimeField(null=True)

    class Meta:
        table = "agent_help"
        indexes = (("tenant", "asked_of_id"), ("root_id",))
