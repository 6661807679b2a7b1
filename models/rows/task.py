from tortoise import fields
from tortoise.models import Model

MAX_DEPTH = 64
PATH_CHARS = 37 * (MAX_DEPTH + 1) - 1


class AgentTask(Model):
    """The receipt: one row per piece of agent work. Counts and cost are never stored here."""

    id = fields.UUIDField(primary_key=True)
    tenant = fields.CharField(max_length=200)
    agent = fields.CharField(max_length=200)
    skill = fields.CharField(max_length=200)
    skill_version = fields.CharField(max_length=200, null=True)
    cause = fields.CharField(max_length=16)
    about = fields.TextField(null=True)
    trigger = fields.TextField(null=True)
    given = fields.TextField(null=True)
    instruction_set = fields.IntField(null=True)
    instructions_sent = fields.TextField(null=True)
    instructions_hash = fields.CharField(max_length=64, null=True)
    requester_id = fields.CharField(max_length=200, null=True)
    requester_name = fields.CharField(max_length=400, null=True)
    actor_id = fields.CharField(max_length=200)
    actor_name = fields.CharField(max_length=400, null=True)
    status = fields.CharField(max_length=16)
    outcome = fields.TextField(null=True)
    result = fields.TextField(null=True)
    limit_micros = fields.BigIntField(null=True)
    started_at = fields.DatetimeField()
    ended_at = fields.DatetimeField(null=True)
    session = fields.CharField(max_length=256, null=True)
    workflow_run = fields.CharField(max_length=200, null=True)
    run_step = fields.CharField(max_length=200, null=True)
    entity_type = fields.CharField(max_length=200, null=True)
    entity_id = fields.CharField(max_length=200, null=True)
    parent_id = fields.UUIDField(null=True)
    root_id = fields.UUIDField()
    depth = fields.IntField()
    sequence = fields.IntField()
    path = fields.CharField(max_length=PATH_CHARS)
    chain_length = fields.IntField(default=0)
    chain_head = fields.CharField(max_length=64, default="0" * 64)
    withheld = fields.CharField(max_length=16, null=True)
    content_erased_at = fields.DatetimeField(null=True)
    anonymised_at = fields.DatetimeField(null=True)
    stops = fields.TextField(null=True)
    """On a root: the stops asked in its tree, as JSON keyed by task id (see resolvers/write/stops.py)."""

    class Meta:
        table = "agent_task"
        indexes = (
            ("tenant", "started_at", "id"),
            ("tenant", "agent", "started_at", "id"),
            ("tenant", "skill", "started_at", "id"),
            ("tenant", "status", "started_at", "id"),
            ("tenant", "requester_id", "started_at", "id"),
            ("tenant", "session", "started_at", "id"),
            ("tenant", "entity_type", "started_at", "id"),
            ("tenant", "entity_id", "started_at", "id"),
            ("tenant", "workflow_run", "started_at", "id"),
            ("tenant", "parent_id", "sequence"),
            ("root_id",),
        )
