from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from graph.api.context import Info
from graph.api.inputs import TaskFilter, plain
from graph.fast.plan import TaskPlan, prefetch
from graph.types.agent_help import AgentHelp, help_view
from graph.types.agent_task import AgentTask, task_view, task_views
from graph.types.agent import Agent
from graph.types.connection import AgentTaskConnection, AgentTaskEdge, PageInfo
from graph.types.running_trace import RunningTraceConnection
from graph.types.enums import UsageBucket, UsageGroup
from graph.types.task_order import TaskOrder
from graph.types.session import Session
from graph.types.usage_point import UsagePoint
from graph.types.trace_check import TraceCheck
from graph.types.viewer import Viewer
from permissions.access import LEDGER_READERS_NAMED
from resolvers.answer.ledger import ledger_of
from resolvers.read import rows_seen
from resolvers.write import signing
from resolvers.read import running, task_list, usage
from resolvers.read.session import read_session
from resolvers.read.verify import verify_task
from resolvers.webhooks import outbox


@strawberry.type
class Query:
    @strawberry.field(description="One task, or null when it does not exist for the caller.")
    async def task(self, info: Info, id: strawberry.ID) -> AgentTask | None:
        plan = TaskPlan.of(s for f in info.selected_fields for s in f.selections) if info.schema.fast else None
        view = await task_view(info, await rows_seen.task_row(info.context.access, id), plan)
        if view is not None and plan is not None:
            await prefetch(info.context, plan, [view.row])
        return view

    @strawberry.field(description="The root of the tenant's ledger: every change to who may read or do what, and to "
                      "what is kept, is a CONFIG_CHANGED line of its record (agent `agentlog`, skill `configuration`). "
                      f"Readable by: {LEDGER_READERS_NAMED}; null for anyone else, and before the first change.")
    async def ledger(self, info: Info) -> AgentTask | None:
        plan = TaskPlan.of(s for f in info.selected_fields for s in f.selections) if info.schema.fast else None
        view = await task_view(info, await ledger_of(info.context.access), plan)
        if view is not None and plan is not None:
            await prefetch(info.context, plan, [view.row])
        return view

    @strawberry.field(description="Tasks the caller may see, in `orderBy` order, then id; first is at most 500.")
    async def tasks(
        self,
        info: Info,
        filter: TaskFilter | None = None,
        first: int = 50,
        after: str | None = None,
        order_by: TaskOrder = TaskOrder.STARTED_AT_DESC,
    ) -> AgentTaskConnection:
        flt = task_list.plain_filter(plain(filter) or {})
        counted = any(getattr(s, "name", None) == "totalCount" for f in info.selected_fields for s in f.selections)
        page = await task_list.list_tasks(
            info.context.access, flt, first, after, task_list.TaskOrder(order_by), counted=counted
        )
        rows, more = page.rows, page.more
        views = {v.row.id: v for v in await task_views(info, rows)}
        if info.schema.fast:
            plan = TaskPlan.of_connection(s for f in info.selected_fields for s in f.selections)
            for view in views.values():
                view.plan = plan
            await prefetch(info.context, plan, [v.row for v in views.values()])
        edges = [AgentTaskEdge(cursor=page.cursor(r), node=views[r.id]) for r in rows if r.id in views]
        return AgentTaskConnection(
            edges=edges,
            total=page.total,
            page_info=PageInfo(
                has_next_page=more,
                has_previous_page=after is not None,
                start_cursor=edges[0].cursor if edges else None,
                end_cursor=edges[-1].cursor if edges else None,
            ),
        )

    @strawberry.field(description="One conversation's turns and spend as the caller may see them; null when they may "
                      "see none of its tasks.")
    async def session(self, info: Info, id: str) -> Session | None:
        found = await read_session(info.context.access, id)
        return Session.of(found) if found is not None else None

    @strawberry.field(description="Spend, tokens, model calls and failed tasks from `from` up to `to`, a point per "
                      "bucket and key that has any, oldest first; summed from the meter over the work the caller may "
                      "see. Grouping by REQUESTER needs the right to read who asked.")
    async def usage(
        self,
        info: Info,
        from_: Annotated[datetime, strawberry.argument(name="from")],
        to: datetime,
        group_by: UsageGroup,
        bucket: UsageBucket = UsageBucket.HOUR,
    ) -> list[UsagePoint]:
        found = await usage.read_usage(info.context.access, from_, to, usage.UsageBucket(bucket), usage.UsageGroup(group_by))
        return [UsagePoint.of(p) for p in found]

    @strawberry.field(description="Walks the whole chain of the task's tree; null for a task the caller cannot see.")
    async def verify_trace(self, info: Info, task: strawberry.ID) -> TraceCheck | None:
        row = await rows_seen.task_row(info.context.access, task)
        if row is None:
            return None
        check = await verify_task(row.id, row.tenant)
        if check is not None and not check.intact:
            await outbox.tell_broken(row.tenant, row.root_id, row.id, check)
        return TraceCheck.of(check)

    @strawberry.field(description="The C2SP verifier key that checks every checkpoint this server signs; public.")
    def checkpoint_key(self) -> str:
        return signing.verifier_key()

    @strawberry.field(description="One help request, or null when it does not exist for the caller.")
    async def agent_help(self, info: Info, id: strawberry.ID) -> AgentHelp | None:
        return await help_view(info, await rows_seen.help_row(info.context.access, id))

    @strawberry.field(description="The tenant's registered agents, by name; empty without a token.")
    async def agents(self, info: Info) -> list[Agent]:
        return [Agent.of(row) for row in await rows_seen.agents(info.context.access)]

    @strawberry.field(description="Work sent over OpenTelemetry whose spans wait to be placed, newest first; not "
                                  "yet part of the record. For supervisesAgents, auditsAgents, readsAllAgentWork "
                                  "and the kit; empty for anyone else; first is at most 100.")
    async def running_traces(self, info: Info, first: int = 20, after: str | None = None) -> RunningTraceConnection:
        return RunningTraceConnection.of(await running.running_traces(info.context.access, first, after), after)

    @strawberry.field(description="The caller, as the token says.")
    async def me(self, info: Info) -> Viewer:
        p = info.context.caller()
        return Viewer(id=p.sub, name=p.name, tenant=p.tenant, roles=sorted(p.roles),
                      holds_records=await info.context.access.holds())
