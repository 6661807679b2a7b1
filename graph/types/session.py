from __future__ import annotations

from datetime import datetime

import strawberry

from graph.api.context import Info
from graph.types.agent_task import AgentTask, task_views
from graph.types.scalars import Long
from resolvers.read.session import SessionRead


@strawberry.type(description="One conversation: the tasks that carry its session id, as the caller may see them, with "
                 "its spend summed from the meter over those tasks (sub-tasks included) at read time.")
class Session:
    id: str
    task_count: int = strawberry.field(description="The session's tasks the caller may see, sub-tasks included.")
    total_cost_micros: Long = strawberry.field(description="All-in cost of those tasks, in millionths of a dollar.")
    input_tokens: Long
    output_tokens: Long
    model_calls: int
    failed_tasks: int
    started_at: datetime | None = strawberry.field(description="When its first task started (UTC).")
    ended_at: datetime | None = strawberry.field(description="When its last task ended (UTC); null while one runs.")
    more_turns: bool = strawberry.field(description="More than the 500 turns `tasks` lists.")
    read: strawberry.Private[SessionRead]

    @strawberry.field(description="Its turns, oldest first: each task whose parent is not of the session for the caller.")
    async def tasks(self, info: Info) -> list[AgentTask]:
        return await task_views(info, self.read.turns)

    @classmethod
    def of(cls, read: SessionRead) -> Session:
        return cls(
            id=read.id, task_count=read.task_count, total_cost_micros=Long(read.cost_micros),
            input_tokens=Long(read.input_tokens), output_tokens=Long(read.output_tokens), model_calls=read.model_calls,
            failed_tasks=read.failed_tasks, started_at=read.started_at, ended_at=read.ended_at,
            more_turns=read.more_turns, read=read,
        )
