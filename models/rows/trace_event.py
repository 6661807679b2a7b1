from tortoise import fields
from tortoise.models import Model


class TraceEvent(Model):
    """One line of a tree's record. Lines are appended by the write path and changed only by erasure."""

    id = fields.BigIntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    root_id = fields.UUIDField()
    seq = fields.IntField()
    kind = fields.CharField(max_length=16)
    task_id = fields.UUIDField()
    at = fields.DatetimeField()
    summary = fields.TextField(null=True)
    payload = fields.TextField(null=True)
    withheld = fields.CharField(max_length=16, null=True)
    model = fields.CharField(max_length=200, null=True)
    route_rule = fields.CharField(max_length=200, null=True)
    attempts = fields.IntField(null=True)
    cost_micros = fields.BigIntField(null=True)
    call_id = fields.UUIDField(null=True)
    tool = fields.CharField(max_length=200, null=True)
    tool_call_id = fields.CharField(max_length=200, null=True)
    input_tokens = fields.BigIntField(null=True)
    output_tokens = fields.BigIntField(null=True)
    duration_ms = fields.IntField(null=True)
    is_error = fields.BooleanField(null=True)
    by_tool = fields.CharField(max_length=200, null=True)
    summary_salt = fields.CharField(max_length=32, null=True)
    payload_salt = fields.CharField(max_length=32, null=True)
    summary_hash = fields.CharField(max_length=64)
    payload_hash = fields.CharField(max_length=64)
    prev_hash = fields.CharField(max_length=64)
    hash = fields.CharField(max_length=64)
    erased_at = fields.DatetimeField(null=True)
    content_erased_at = fields.DatetimeField(null=True)

    class Meta:
        table = "trace_event"
        unique_together = (("root_id", "seq"),)
        indexes = (("task_id", "seq"),)
