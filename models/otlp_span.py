from tortoise import fields
from tortoise.models import Model


class OtlpSpan(Model):
    """A span taken from an OTLP export, kept from its acknowledgement until it is placed in the record.

    A placed span keeps its ids (so the same span sent again is recorded once, and its children find it) and
    loses its body, but for a tool span's tool name (a model call made inside it may come later).
    """

    id = fields.BigIntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    trace_id = fields.CharField(max_length=32)
    span_id = fields.CharField(max_length=16)
    parent_span_id = fields.CharField(max_length=16, null=True)
    kind = fields.CharField(max_length=8)
    body = fields.TextField(null=True)
    received_us = fields.BigIntField()
    placed = fields.BooleanField(default=False)
    task_id = fields.UUIDField(null=True)

    class Meta:
        table = "otlp_span"
        unique_together = (("tenant", "trace_id", "span_id"),)
