from tortoise import fields
from tortoise.connection import get_connection
from tortoise.models import Model

from models.db import placeholders

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
    retention_basis = fields.TextField(null=True)
    holds_records = fields.JSONField(default=list)

    class Meta:
        table = "policies"


async def capability_roles(tenant: str) -> dict[str, list[str]] | None:
    """The roles holding each capability in `tenant` (None: no policies yet), read by one plain statement: it
    is read for every request, and building it through the ORM's query builder cost more than sending it."""
    conn = get_connection("default")
    listed = ", ".join(f'"{cap}"' for cap in CAPABILITIES)
    _, rows = await conn.execute_query(placeholders(conn, f'SELECT {listed} FROM "policies" WHERE "tenant" = $1'),
                                       [tenant])
    if not rows:
        return None
    fields_map = TenantPolicies._meta.fields_map
    return {cap: fields_map[cap].to_python_value(rows[0][i]) or [] for i, cap in enumerate(CAPABILITIES)}


async def hold_roles(tenant: str) -> list[str]:
    """The roles named by `holdsRecords`: who may hold work. Not a reader of anything, so not a capability."""
    roles = await TenantPolicies.filter(tenant=tenant).values_list("holds_records", flat=True)
    return list(roles[0] or []) if roles else []
