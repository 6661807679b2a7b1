from collections.abc import Awaitable, Callable

import strawberry

from graph.types.agent_task import AgentTask


@strawberry.type
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    start_cursor: str | None
    end_cursor: str | None


@strawberry.type
class AgentTaskEdge:
    cursor: str
    node: AgentTask


@strawberry.type(description="A page of tasks, in the order asked for (newest first by startedAt, then id, unless told).")
class AgentTaskConnection:
    edges: list[AgentTaskEdge]
    page_info: PageInfo
    total: strawberry.Private[Callable[[], Awaitable[int]]]

    @strawberry.field(description="How many tasks the filter matches among those the caller may see, every page together.")
    async def total_count(self) -> int:
        return await self.total()
