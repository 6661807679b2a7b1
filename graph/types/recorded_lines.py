from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import strawberry

from graph.api.context import Info
from resolvers.write import lines
from resolvers.write.lines import Recorded

if TYPE_CHECKING:
    from graph.types.agent_task import AgentTask
    from graph.types.trace_event import TraceEvent


@strawberry.type(description="Where a recordLines batch landed in its tree's chain.")
class RecordedLines:
    recorded: strawberry.Private[Recorded]

    @strawberry.field(description="The first line written (its seq in the tree's chain).")
    def first_seq(self) -> int:
        return self.recorded.first

    @strawberry.field(description="The last line written.")
    def last_seq(self) -> int:
        return self.recorded.last

    @strawberry.field(description="The last line's hash: the chain's head right after this batch.")
    def last_hash(self) -> str:
        return self.recorded.last_hash

    @strawberry.field(description="The task the lines were written to.")
    async def task(self, info: Info) -> Annotated["AgentTask", strawberry.lazy("graph.types.agent_task")] | None:
        from graph.types.agent_task import task_view

        return await task_view(info, await info.context.loaders.task.load(self.recorded.task_id))

    @strawberry.field(description="The lines written, in seq order, read back as the caller may read them.")
    async def lines(self, info: Info) -> list[Annotated["TraceEvent", strawberry.lazy("graph.types.trace_event")]]:
        from graph.types.agent_task import line_views

        task = await info.context.loaders.task.load(self.recorded.task_id)
        groups = await info.context.access.groups(task) if task is not None else frozenset()
        if not groups:
            return []
        return line_views(info, await lines.lines_of(self.recorded), lambda _: groups)  # type: ignore[return-value]
