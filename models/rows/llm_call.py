from tortoise import fields
from tortoise.models import Model

from models.rows.task import PATH_CHARS


class LlmCall(Model):
    """The meter: one row per model call. It outlives the work it was for (task and path cleared)."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    task_id = fields.UUIDField(null=True)
    task_path = fields.CharField(max_length=PATH_CHARS, null=True)
    turn = fields.IntField(null=True)
    agent = fields.CharField(max_length=200)
    model = fields.CharField(max_length=200)
    provider = fields.CharField(max_length=200, null=True)
    route_rule = fields.CharField(max_length=200, null=True)
    attempts = fields.IntField()
    input_tokens = fields.BigIntField()
    output_tokens = fields.BigIntField()
    cost_micros = fields.BigIntField()
    cost_source = fields.CharField(max_length=16, default="KIT", db_default="KIT")
    cached_input_tokens = fields.BigIntField(null=True)
    duration_ms = fields.IntField(null=True)
    at = fields.DatetimeField()
    by_tool = fields.CharField(max_length=200, null=True)

    class Meta:
        table = "llm_call"
        indexes = (("task_id", "at"), ("task_id", "turn"), ("tenant", "agent"), ("tenant", "model", "task_id"))
