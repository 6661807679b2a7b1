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


@strawberry.type(description="A page of tasks, newest first by startedAt, then id.")
class AgentTaskConnection:
    edges: list[AgentTaskEdge]
    page_info: PageInfo
