from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

import models
from graph.api.context import Info
from graph.types.enums import CostSource
from graph.types.scalars import Long

if TYPE_CHECKING:
    from graph.types.agent_task import AgentTask


@strawberry.type(description="A meter row: one model call, what it used and cost. It outlives the work it was for.")
class LlmCall:
    row: strawberry.Private[models.LlmCall]
    id: strawberry.ID
    task_path: str | None
    turn: int | None
    agent: str
    model: str
    provider: str | None
    route_rule: str | None
    attempts: int
    input_tokens: Long
    output_tokens: Long
    cost_micros: Long
    cost_source: CostSource = strawberry.field(
        description="KIT (sent with the call), PRICE_TABLE (priced from the tenant's table) or UNPRICED (cost 0)."
    )
    cached_input_tokens: Long | None
    duration_ms: int | None
    at: datetime
    by_tool: str | None

    @strawberry.field(description="The task the call was for; null once the work was forgotten.")
    async def task(self, info: Info) -> Annotated["AgentTask", strawberry.lazy("graph.types.agent_task")] | None:
        from graph.types.agent_task import task_view

        if self.row.task_id is None:
            return None
        return await task_view(info, await info.context.loaders.task.load(self.row.task_id))


def call_view(row: models.LlmCall) -> LlmCall:
    return LlmCall(
        row=row,
        id=strawberry.ID(str(row.id)),
        task_path=row.task_path,
        turn=row.turn,
        agent=row.agent,
        model=row.model,
        provider=row.provider,
        route_rule=row.route_rule,
        attempts=row.attempts,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        cost_micros=row.cost_micros,
        cost_source=CostSource(row.cost_source),
        cached_input_tokens=row.cached_input_tokens,
        duration_ms=row.duration_ms,
        at=row.at,
        by_tool=row.by_tool,
    )
