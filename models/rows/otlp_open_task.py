from tortoise import fields
from tortoise.models import Model


class OtlpOpenTask(Model):
    """A task a start marker opened whose span has not come yet: its span's id, its task, and when a span of its
    trace was last received, so the sweep ends it FAILED once its trace has been quiet for `AGENTLOG_OTLP_WAIT_S`.
    The row goes when the span comes, or when the sweep ends the task. Only running tasks are here, so the rows
    of one trace are few, read together by (tenant, trace_id) on every export of the trace."""

    id = fields.BigIntField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    trace_id = fields.CharField(max_length=32)
    span_id = fields.CharField(max_length=16)
    task_id = fields.UUIDField()
    seen_us = fields.BigIntField(db_index=True)

    class Meta:
        table = "otlp_open_task"
        unique_together = (("tenant", "trace_id", "span_id"),)
