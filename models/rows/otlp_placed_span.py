from tortoise import fields
from tortoise.indexes import Index
from tortoise.models import Model


class OtlpPlacedSpan(Model):
    """A span placed in the record, one row each, found by its id: so the same span sent again is recorded
    once, a child that comes later finds its parent, and a model call made inside a tool span finds its tool.

    `task_id` is the task an agent span became (for the trace's stand-in, the one still running, if any);
    `tool` is a tool span's tool. Its unique index leads with the span id (see `OtlpSpan`); the index on the
    parent's id finds the folded spans below a span, through which spans waiting below it are found."""

    id = fields.BigIntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    trace_id = fields.CharField(max_length=32)
    span_id = fields.CharField(max_length=16)
    parent_span_id = fields.CharField(max_length=16, null=True)
    kind = fields.CharField(max_length=8)
    task_id = fields.UUIDField(null=True)
    tool = fields.TextField(null=True)

    class Meta:
        table = "otlp_placed_span"
        unique_together = (("span_id", "tenant", "trace_id"),)
        indexes = (Index(fields=("parent_span_id",)),)
