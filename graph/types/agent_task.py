from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry

import models
from graph.context import Info
from graph.guard import build, guarded
from graph.types.cost import Cost
from graph.types.enums import TaskCause, TaskStatus
from graph.types.principal import Principal
from graph.types.scalars import JSON, Long
from permissions.access import ancestor_ids
from permissions.table import Group
from resolvers.transcript import turns_of

if TYPE_CHECKING:
    from graph.types.llm_call import LlmCall
    from graph.types.trace_event import TraceEvent
    from graph.types.transcript import AgentLlmTurn

F, W, C = Group.FIGURES, Group.WORDS, Group.CONTENT


@strawberry.type(description="The receipt of one piece of agent work: who asked, as whom it ran, what it cost, how it ended.")
class AgentTask:
    groups: strawberry.Private[frozenset]
    row: strawberry.Private[models.AgentTask]

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

    @guarded(F, "How many lines the tree's chain holds; the same on every task of the tree.")
    async def chain_length(self, info: Info) -> int | None:
        return (await _root_row(self, info)).chain_length

    @guarded(F, "The hash of the tree's last line; the same on every task of the tree.")
    async def chain_head(self, info: Info) -> str | None:
        return (await _root_row(self, info)).chain_head

    @guarded(F, "The task it was handed on from.")
    async def parent(self, info: Info) -> AgentTask | None:
        if self.row.parent_id is None:
            return None
        return await task_view(info, await info.context.loaders.task.load(self.row.parent_id))

    @guarded(F, "The top of its tree.")
    async def root(self, info: Info) -> AgentTask | None:
        return await task_view(info, await _root_row(self, info))

    @guarded(F, "Every task above it, root first, not itself.")
    async def lineage(self, info: Info) -> list[AgentTask]:
        rows = await info.context.loaders.tasks(ancestor_ids(self.row.path)[:-1])
        return await task_views(info, [r for r in rows if r is not None])

    @guarded(F, "The tasks it handed on, in sequence order.")
    async def children(self, info: Info) -> list[AgentTask]:
        return await task_views(info, await info.context.loaders.children.load(self.row.id))

    @guarded(F, "Everything under it, not itself, depth first in sequence order.")
    async def subtree(self, info: Info) -> list[AgentTask]:
        return await task_views(info, await info.context.loaders.subtree.load(self.row.path))

    @guarded(F, "What it cost on its own and all in, from the meter.")
    async def cost(self, info: Info) -> Cost:
        own = await info.context.loaders.own_meter.load(self.row.id)
        all_in = await info.context.loaders.all_in_meter.load(self.row.path)
        return Cost(
            own_micros=own.micros,
            all_in_micros=all_in.micros,
            own_input_tokens=own.input_tokens,
            own_output_tokens=own.output_tokens,
            all_in_input_tokens=all_in.input_tokens,
            all_in_output_tokens=all_in.output_tokens,
            own_model_calls=own.model_calls,
            all_in_model_calls=all_in.model_calls,
        )

    @guarded(F, "Its own spend, in millionths of a dollar, summed from the meter.")
    async def spent_micros(self, info: Info) -> Long:
        return (await info.context.loaders.own_meter.load(self.row.id)).micros

    @guarded(F, "Its own model calls, a tool's included.")
    async def model_calls(self, info: Info) -> int:
        return (await info.context.loaders.own_meter.load(self.row.id)).model_calls

    @guarded(F, "Its own input tokens.")
    async def input_tokens(self, info: Info) -> Long:
        return (await info.context.loaders.own_meter.load(self.row.id)).input_tokens

    @guarded(F, "Its own output tokens.")
    async def output_tokens(self, info: Info) -> Long:
        return (await info.context.loaders.own_meter.load(self.row.id)).output_tokens

    @guarded(F, "Its own tool calls, from the record.")
    async def tool_calls(self, info: Info) -> int:
        return (await info.context.loaders.own_steps.load(self.row.id)).tool_calls

    @guarded(F, "Its own turns: the agent's model calls, not a tool's.")
    async def turns(self, info: Info) -> int:
        return (await info.context.loaders.own_steps.load(self.row.id)).turns

    @guarded(F, "Its meter rows.")
    async def calls(
        self, info: Info
    ) -> list[Annotated["LlmCall", strawberry.lazy("graph.types.llm_call")]]:
        from graph.types.llm_call import call_view

        return [call_view(c) for c in await info.context.loaders.calls.load(self.row.id)]

    @guarded(F, "Its own lines, in seq order.")
    async def trace(
        self, info: Info
    ) -> list[Annotated["TraceEvent", strawberry.lazy("graph.types.trace_event")]]:
        from graph.types.trace_event import line_view

        return [line_view(e, self.groups) for e in await info.context.loaders.trace.load(self.row.id)]

    @guarded(F, "The tree's whole chain, in seq order: the lines of the tasks the caller may read.")
    async def record(
        self, info: Info
    ) -> list[Annotated["TraceEvent", strawberry.lazy("graph.types.trace_event")]]:
        from graph.types.trace_event import line_view

        tasks = await info.context.loaders.tree.load(self.row.root_id)
        groups = await info.context.access.task_groups(tasks)
        lines = await info.context.loaders.record.load(self.row.root_id)
        return [line_view(e, groups[e.task_id]) for e in lines if groups.get(e.task_id)]

    @guarded(
        C,
        "The model turns of this task and everything under it. Read only by a caller holding a transcriptReaders "
        "role of every agent in the subtree; otherwise empty, never partial.",
    )
    async def transcript(
        self, info: Info
    ) -> list[Annotated["AgentLlmTurn", strawberry.lazy("graph.types.transcript")]]:
        from graph.types.transcript import turn_view

        below = await info.context.loaders.subtree.load(self.row.path)
        tasks = [self.row, *below]
        if not await info.context.access.reads_transcripts_of(t.agent for t in tasks):
            return []
        lines = await info.context.loaders.trace.load_many([t.id for t in tasks])
        return [turn_view(t) for t in turns_of(tasks, [line for group in lines for line in group])]


async def _root_row(task: AgentTask, info: Info) -> models.AgentTask:
    if task.row.root_id == task.row.id:
        return task.row
    return await info.context.loaders.task.load(task.row.root_id)


def _view(row: models.AgentTask, groups: frozenset) -> AgentTask:
    return build(
        AgentTask,
        groups,
        row=row,
        id=strawberry.ID(str(row.id)),
        agent=row.agent,
        skill=row.skill,
        skill_version=row.skill_version,
        cause=TaskCause(row.cause),
        status=TaskStatus(row.status),
        started_at=row.started_at,
        ended_at=row.ended_at,
        limit_micros=row.limit_micros,
        session=row.session,
        workflow_run=row.workflow_run,
        run_step=row.run_step,
        entity_type=row.entity_type,
        instruction_set=row.instruction_set,
        instructions_hash=row.instructions_hash,
        actor=Principal.of(row.actor_id, row.actor_name),
        depth=row.depth,
        sequence=row.sequence,
        path=row.path,
        about=row.about,
        trigger=row.trigger,
        outcome=row.outcome,
        requester=Principal.of(row.requester_id, row.requester_name),
        entity_id=row.entity_id,
        given=row.given,
        result=json.loads(row.result) if row.result is not None else None,
        instructions_sent=row.instructions_sent,
    )


async def task_views(info: Info, rows: Sequence[models.AgentTask]) -> list[AgentTask]:
    """The rows the caller may see, as AgentTask objects with what they may not read left null."""
    info.context.loaders.prime(rows)
    groups = await info.context.access.task_groups(list(rows))
    return [_view(row, groups[row.id]) for row in rows if groups[row.id]]


async def task_view(info: Info, row: models.AgentTask | None) -> AgentTask | None:
    if row is None:
        return None
    views = await task_views(info, [row])
    return views[0] if views else None
