from tortoise import fields
from tortoise.indexes import Index
from tortoise.models import Model


class OtlpPlaced(Model):
    """The spans of one trace placed in one pass, as one row.

    `spans` is a JSON array of [span id, parent span id, kind, the task an agent span became, a tool span's
    tool]: so the same span sent again is recorded once, a child that comes later finds its parent, and a model
    call made inside a tool span finds its tool."""

    id = fields.BigIntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    trace_id = fields.CharField(max_length=32)
    spans = fields.TextField()

    class Meta:
        table = "otlp_placed"
        indexes = (Index(fields=("tenant", "trace_id")),)
