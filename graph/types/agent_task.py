from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any

import strawberry

import models
from graph.api.context import Info
from graph.api.guard import built_whole, guarded
from graph.api import pages
from graph.fast.lazy import Views, lazy_view
from graph.fast.plan import TaskPlan
from graph.types.cost import Cost
from graph.types.enums import FieldGroup, TaskCause, TaskStatus, TraceKind
from graph.types.principal import Principal
from graph.types.stop_ask import StopAsk
from graph.types.scalars import JSON, Long
from graph.types.trace_event import TraceEvent, content_access, withheld_reason
from permissions.access import Group, ancestor_ids
from resolvers.read.pages import capped, seq_page
from resolvers.read.rows import LINE_COLUMNS, TaskRow
from resolvers.read.transcript import turns_of
from resolvers.control import stop_asks

from graph.types.hold import Hold
from graph.types.review import Review

if TYPE_CHECKING:
    from graph.types.llm_call import LlmCall
    from graph.types.transcript import AgentLlmTurn

Row = TaskRow | models.AgentTask

F, W, S, C = Group.FIGURES, Group.WORDS, Group.SENTENCES, Group.CONTENT


@strawberry.type(description="The receipt of one piece of agent work: who asked, as whom it ran, what it cost, how it ended.")
class AgentTask:
    groups: strawberry.Private[frozenset]
    row: strawberry.Private[Row]
    plan: strawberry.Private[TaskPlan | None] = None

    id: strawberry.ID = guarded(F, "The task's id.")
    agent: str = guarded(F, "The agent whose work this was.")
    skill: str = guarded(F, "The skill it used.")
    skill_version: str | None = guarded(F, "The skill's version.")
    cause: TaskCause | None = guarded(F, "What set it going.")
    status: TaskStatus | None = guarded(F, "How it stands.")
    started_at: datetime | None = guarded(F, "When it started (UTC).")
    ended_at: datetime | None = guarded(F, "When it ended (UTC).")
    limit_micros: Long | None = guarded(F, "Its budget, in millionths of a dollar.")
    session: str | None = guarded(F, "The chat session it belongs to; a sub-task inherits its parent's.")
    workflow_run: str | None = guarded(F, "The workflow run it is a step of.")
    run_step: str | None = guarded(F, "The step of that run.")
    entity_type: str | None = guarded(F, "The kind of record it is about.")
    instruction_set: int | None = guarded(F, "Which set of instructions it was given.")
    instructions_hash: str | None = guarded(F, "Hex SHA-256 of the instructions sent, set by the server.")
    actor: Principal | None = guarded(F, "The account it ran as.")
    depth: int | None = guarded(F, "How deep it is in its tree; the root is 0.")
    sequence: int | None = guarded(F, "Its place among its siblings, from 1, in the order they were handed on.")
    path: str | None = guarded(F, "Its ancestry, root first, ending in its own id, joined by '/'.")
    about: str | None = guarded(W, "One line for a list: what it is about.")
    trigger: str | None = guarded(W, "The full reason it ran.")
    outcome: str | None = guarded(W, "How it ended, in a sentence.")
    requester: Principal | None = guarded(W, "The person it was for.")
    entity_id: str | None = guarded(W, "The record it is about.")
    given: str | None = guarded(C, "The brief it was given.")
    result: JSON | None = guarded(C, "What it handed back.")
    instructions_sent: str | None = guarded(C, "The instructions it was sent.")
    readable_groups: list[FieldGroup] = guarded(
        F,
        "The field groups the caller may read on this task: a field of a group not listed is withheld from them, "
        "a null field of a group listed was not recorded.",
    )

    @guarded(F, "How many lines the tree's chain holds; the same on every task of the tree.")
    async def chain_length(self, info: Info) -> int | None:
        return (await _root_row(self, info)).chain_length

    @guarded(F, "The hash of the tree's last line; the same on every task of the tree.")
    async def chain_head(self, info: Info) -> str | None:
        return (await _root_row(self, info)).chain_head

    @guarded(F, "On a root: the tree's latest signed checkpoint, a C2SP signed note over chainLength and "
                "chainHead; null below the root.")
    async def checkpoint(self, info: Info) -> str | None:
        if self.row.root_id != self.row.id:
            return None
        return await info.context.loaders.checkpoint.get(self.row.id)

    @guarded(F, "The task it was handed on from.")
    async def parent(self, info: Info) -> AgentTask | None:
        if self.row.parent_id is None:
            return None
        return await task_view(info, await info.context.loaders.task.get(self.row.parent_id), self.below("parent"))

    @guarded(F, "The stop a person asked of it, or null; a stop asked above it is on that task.")
    async def stop_asked(self, info: Info) -> StopAsk | None:
        return StopAsk.of(stop_asks.of(await _root_row(self, info), self.row))

    @guarded(F, "The top of its tree.")
    async def root(self, info: Info) -> AgentTask | None:
        return await task_view(info, await _root_row(self, info), self.below("root"))

    @guarded(F, "Every task above it, root first, not itself.")
    async def lineage(self, info: Info) -> list[AgentTask]:
        rows = await info.context.loaders.tasks(ancestor_ids(self.row.path)[:-1])
        return await task_views(info, [r for r in rows if r is not None], self.below("lineage"))

    @guarded(F, "The tasks it handed on, in sequence order; a page of them past `after` (a child's id) with `first`.")
    async def children(
        self, info: Info, first: int | None = None, after: strawberry.ID | None = None
    ) -> list[AgentTask]:
        at = await pages.children_page(info.context, self.row, first, after)
        if at.first is None and at.after is None:
            rows = await info.context.loaders.children.get(self.row.id)
        else:
            rows = await info.context.loaders.children_page(at).get(self.row.id)
        return await task_views(info, capped("children", rows, at), self.below("children"))

    @guarded(
        F,
        "Everything under it, not itself, depth first in sequence order; a page of it past `after` (the id of a "
        "task under it) with `first`.",
    )
    async def subtree(
        self, info: Info, first: int | None = None, after: strawberry.ID | None = None
    ) -> list[AgentTask]:
        rows = await info.context.loaders.subtree.get(self.row.path)
        return await task_views(info, pages.subtree_slice(rows, first, after), self.below("subtree"))

    @guarded(F, "How many tasks it handed on.")
    async def child_count(self, info: Info) -> int | None:
        return await info.context.loaders.child_count.get(self.row.id)

    @guarded(F, "How many tasks lie under it, not itself.")
    async def subtree_count(self, info: Info) -> int | None:
        return await info.context.loaders.subtree_count.get(self.row.path)

    @guarded(F, "What it cost on its own and all in (it and everything under it), summed from the meter.")
    async def cost(self, info: Info) -> Cost:
        return Cost.of(await info.context.loaders.meter.get(self.row.path))

    @guarded(F, "Its own spend, in millionths of a dollar, summed from the meter.")
    async def spent_micros(self, info: Info) -> Long:
        return Long((await info.context.loaders.meter.get(self.row.path)).own.micros)

    @guarded(F, "Its own model calls, a tool's included, counted from the meter.")
    async def model_calls(self, info: Info) -> int:
        return (await info.context.loaders.meter.get(self.row.path)).own.model_calls

    @guarded(F, "Its own input tokens, summed from the meter.")
    async def input_tokens(self, info: Info) -> Long:
        return Long((await info.context.loaders.meter.get(self.row.path)).own.input_tokens)

    @guarded(F, "Its own output tokens, summed from the meter.")
    async def output_tokens(self, info: Info) -> Long:
        return Long((await info.context.loaders.meter.get(self.row.path)).own.output_tokens)

    @guarded(F, "Its own tool calls, counted from the record.")
    async def tool_calls(self, info: Info) -> int:
        return (await info.context.loaders.steps.get(self.row.id)).tool_calls

    @guarded(F, "Its own turns, counted from the record: the agent's model calls, not a tool's.")
    async def turns(self, info: Info) -> int:
        return (await info.context.loaders.steps.get(self.row.id)).turns

    @guarded(S, "Its reviews, oldest first: who checked the work, what they found, and when.")
    async def reviews(self, info: Info) -> list[Review]:
        return [Review.of(row) for row in await info.context.loaders.reviews.get(self.row.id)]

    @guarded(F, "How many reviews it has.")
    async def review_count(self, info: Info) -> int:
        return len(await info.context.loaders.reviews.get(self.row.id))

    @guarded(F, "The legal hold on its tree, as its root's figures: who held it, why and since when; null when the "
                "tree is not held.")
    async def hold(self, info: Info) -> Hold | None:
        if self.row.root_id != self.row.id:
            root = await _root_row(self, info)
            if F not in (await info.context.loaders.readable(info.context.access, [root]))[root.id]:
                return None
        row = await info.context.loaders.hold.get(self.row.root_id)
        return Hold.of(row) if row is not None else None

    @guarded(F, "Its meter rows, oldest first; a page of them past `after` (a meter row's id) with `first`.")
    async def calls(
        self, info: Info, first: int | None = None, after: strawberry.ID | None = None
    ) -> list[Annotated["LlmCall", strawberry.lazy("graph.types.llm_call")]]:
        from graph.types.llm_call import call_view

        at = await pages.calls_page(info.context, self.row, first, after)
        rows = await info.context.loaders.calls_page(at).get(self.row.id)
        return [call_view(c) for c in capped("calls", rows, at)]

    @guarded(F, "Its own lines, in seq order; a page of them, those with seq above `after`, with `first`.")
    async def trace(self, info: Info, first: int | None = None, after: int | None = None) -> list[TraceEvent]:
        at = seq_page("trace", first, after)
        columns = self.plan.trace if self.plan and self.plan.trace is not None else LINE_COLUMNS
        lines = capped("trace", await info.context.loaders.trace_page(columns, at).get(self.row.id), at)
        groups = self.groups
        return line_views(info, lines, lambda _: groups)  # type: ignore[return-value]

    @guarded(
        F,
        "The tree's whole chain, in seq order: the lines of the tasks the caller may read; a page of them, those "
        "with seq above `after`, with `first`.",
    )
    async def record(self, info: Info, first: int | None = None, after: int | None = None) -> list[TraceEvent]:
        at = seq_page("record", first, after)
        columns = self.plan.record if self.plan and self.plan.record is not None else LINE_COLUMNS
        key = await pages.record_key(info.context, self.row.root_id)
        groups = await pages.line_groups(info.context, key[0])
        lines = capped("record", await info.context.loaders.record_page(columns, at).get(key), at)
        return line_views(info, lines, groups)  # type: ignore[return-value]

    @guarded(
        Group.TRANSCRIPT,
        "The model turns of this task and everything under it, content included; empty, never partial, "
        "when any agent in the subtree refuses the caller.",
    )
    async def transcript(
        self, info: Info
    ) -> list[Annotated["AgentLlmTurn", strawberry.lazy("graph.types.transcript")]]:
        from graph.types.transcript import turn_view

        below = await info.context.loaders.subtree.get(self.row.path)
        tasks = [self.row, *below]
        if not await info.context.access.reads_transcripts_of(t.agent for t in tasks):
            return []
        lines = await info.context.loaders.trace.get_many([t.id for t in tasks])
        return [turn_view(t) for t in turns_of(tasks, [line for group in lines for line in group])]

    def below(self, field: str) -> TaskPlan | None:
        """The plan for the tasks `field` returns, when this task was read ahead."""
        return self.plan.nested.get(field) if self.plan is not None else None


async def _root_row(task: AgentTask, info: Info) -> Row:
    if task.row.root_id == task.row.id:
        return task.row
    return await info.context.loaders.task.get(task.row.root_id)


def _principal(id_attr: str, name_attr: str) -> Callable[[Any], Principal | None]:
    return lambda view: Principal.of(getattr(view.row, id_attr), getattr(view.row, name_attr))


@lru_cache(maxsize=64)
def field_groups(groups: frozenset[Group]) -> tuple[FieldGroup, ...]:
    """The groups in the table's order, as the schema names them."""
    return tuple(FieldGroup[group.name] for group in Group if group in groups and group.name in FieldGroup.__members__)


TASK_READERS: dict[str, Callable[[Any], Any]] = {
    "id": lambda view: strawberry.ID(str(view.row.id)),
    "cause": lambda view: TaskCause(view.row.cause),
    "status": lambda view: TaskStatus(view.row.status),
    "actor": _principal("actor_id", "actor_name"),
    "requester": _principal("requester_id", "requester_name"),
    "result": lambda view: json.loads(view.row.result) if view.row.result is not None else None,
    "readable_groups": lambda view: field_groups(view.groups),
}
TRACE_KINDS = {kind.value: kind for kind in TraceKind}
LINE_GROUP_READERS: dict[str, Callable[[Any, frozenset], Any]] = {"content_access": content_access}
LINE_READERS: dict[str, Callable[[Any], Any]] = {
    name: (lambda view, read=read: read(view.event, view.groups)) for name, read in LINE_GROUP_READERS.items()
}
LINE_ROW_READERS: dict[str, Callable[[Any], Any]] = {
    "kind": lambda event: TRACE_KINDS[event.kind],
    "withheld_reason": withheld_reason,
}

TaskView = lazy_view(AgentTask, "row", TASK_READERS)
LineView = lazy_view(TraceEvent, "event", row_readers=LINE_ROW_READERS, group_readers=LINE_GROUP_READERS)
WholeTask = built_whole(AgentTask, "row", TASK_READERS)
WholeLine = built_whole(TraceEvent, "event", LINE_READERS, LINE_ROW_READERS)


def line_views(info: Info, lines: Sequence[Any], groups: Callable[[Any], frozenset]) -> Sequence[TraceEvent]:
    """The lines as TraceEvent objects: lazy views, each made when read, on the fast path; built whole on stock."""
    if info.schema.fast:
        return Views(LineView, lines, groups)  # type: ignore[return-value]
    return [WholeLine(line, groups(line)) for line in lines]


async def task_views(info: Info, rows: Sequence[Row], plan: TaskPlan | None = None) -> list[AgentTask]:
    """The rows the caller may see, as AgentTask objects with what they may not read left null."""
    groups = await info.context.loaders.readable(info.context.access, rows)
    make = TaskView if info.schema.fast else WholeTask
    views = []
    for row in rows:
        readable = groups[row.id]
        if readable:
            view = make(row, readable)
            view.plan = plan
            views.append(view)
    return views


async def task_view(info: Info, row: Row | None, plan: TaskPlan | None = None) -> AgentTask | None:
    if row is None:
        return None
    views = await task_views(info, [row], plan)
    return views[0] if views else None
