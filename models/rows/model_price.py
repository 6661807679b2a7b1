from tortoise import fields
from tortoise.models import Model


class ModelPrice(Model):
    """What one model costs a tenant per million tokens, from a date on. A later date supersedes an earlier one."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    model = fields.CharField(max_length=200)
    provider = fields.CharField(max_length=200, null=True)
    input_micros_per_million = fields.BigIntField()
    output_micros_per_million = fields.BigIntField()
    cached_input_micros_per_million = fields.BigIntField(null=True)
    effective_from = fields.DatetimeField()

    class Meta:
        table = "model_price"
        indexes = (("tenant", "model", "effective_from"),)
