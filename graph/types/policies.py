import strawberry

import models


@strawberry.type(description="The roles holding each capability in this tenant. Every list is empty until set.")
class Policies:
    supervises_agents: list[str]
    audits_agents: list[str]
    teaches_agents: list[str]
    reads_all_agent_work: list[str]
    erases_agent_records: list[str]
    retain_days: int | None = strawberry.field(
        description="Days after a work tree's root ends before retention forgets it; null keeps work forever."
    )
    retention_basis: str | None = strawberry.field(
        description="Why work is kept fewer days than AGENTLOG_RETENTION_FLOOR_DAYS, as given with retainDays."
    )
    holds_records: list[str] = strawberry.field(description="The roles that may hold work and release a hold.")

    @classmethod
    def of(cls, row: models.TenantPolicies) -> "Policies":
        return cls(
            supervises_agents=list(row.supervises_agents or []),
            audits_agents=list(row.audits_agents or []),
            teaches_agents=list(row.teaches_agents or []),
            reads_all_agent_work=list(row.reads_all_agent_work or []),
            erases_agent_records=list(row.erases_agent_records or []),
            retain_days=row.retain_days,
            retention_basis=row.retention_basis,
            holds_records=list(row.holds_records or []),
        )
