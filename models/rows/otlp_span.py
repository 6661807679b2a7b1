from tortoise import fields
from tortoise.indexes import Index
from tortoise.models import Model


class OtlpSpan(Model):
    """A span taken from an OTLP export, waiting with its body until it is placed.

    It is kept from its acknowledgement until its agent parent comes (or it has waited long enough), then it is
    placed in the record and deleted; `otlp_placed_span` keeps its identity. A span that comes is found among
    them by its id, and the spans waiting for it by their parent's: both indexes lead with the id looked up, and
    none with the trace, which a planner without statistics on a young table takes for one row and scans
    whole."""

    id = fields.BigIntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    trace_id = fields.CharField(max_length=32)
    span_id = fields.CharField(max_length=16)
    parent_span_id = fields.CharField(max_length=16, null=True)
    kind = fields.CharField(max_length=8)
    body = fields.TextField()
    received_us = fields.BigIntField(db_index=True)

    class Meta:
        table = "otlp_span"
        unique_together = (("span_id", "tenant", "trace_id"),)
        indexes = (Index(fields=("parent_span_id",)),)
