from tortoise import fields
from tortoise.models import Model

CAPABILITIES = (
    "supervises_agents",
    "audits_agents",
    "teaches_agents",
    "reads_all_agent_work",
    "erases_agent_records",
)


class TenantPolicies(Model):
    """The roles holding each capability in one tenant. Every list is empty until the kit sets it."""

    tenant = fields.CharField(max_length=200, primary_key=True)
    supervises_agents = fields.JSONField(default=list)
    audits_agents = fields.JSONField(default=list)
    teaches_agents = fields.JSONField(default=list)
    reads_all_agent_work = fields.JSONField(default=list)
    erases_agent_records = fields.JSONField(default=list)
    retain_days = fields.IntField(null=True)

    class Meta:
        table = "policies"
