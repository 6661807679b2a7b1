from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import strawberry

import models
from graph.api.context import Info
from graph.api.guard import build, guarded
from graph.types.principal import Principal
from permissions.access import Group, describe_outside_work

if TYPE_CHECKING:
    from graph.types.agent_task import AgentTask

F, W, C = Group.FIGURES, Group.WORDS, Group.CONTENT


def _help_field(group: Group, description: str) -> Any:
    return guarded(group, description, then=describe_outside_work(group))


@strawberry.type(
    description="A question an agent asked a person, and the answer. Help asked inside work reads as its task."
)
class AgentHelp:
    groups: strawberry.Private[frozenset]
    row: strawberry.Private[models.AgentHelp]
    id: strawberry.ID = _help_field(F, "The help request's id.")
    asked_at: datetime | None = _help_field(F, "When it was asked.")
    answered_at: datetime | None = _help_field(F, "When it was answered.")
    asked_of: Principal | None = _help_field(W, "Whom it was asked of.")
    answered_by: Principal | None = _help_field(W, "Who answered.")
    question: str | None = _help_field(C, "The question.")
    answer: str | None = _help_field(C, "The answer.")

    @guarded(F, "The work it was asked in; null for help asked outside any work.")
    async def task(self, info: Info) -> Annotated["AgentTask", strawberry.lazy("graph.types.agent_task")] | None:
        from graph.types.agent_task import task_view

        if self.row.task_id is None:
            return None
        return await task_view(info, await info.context.loaders.task.load(self.row.task_id))


async def help_view(info: Info, row: models.AgentHelp | None) -> AgentHelp | None:
    if row is None:
        return None
    task_groups = None
    if row.task_id is not None:
        task = await info.context.loaders.task.load(row.task_id)
        task_groups = await info.context.access.groups(task) if task is not None else None
    groups = await info.context.access.help_groups(row, task_groups)
    if not groups:
        return None
    return build(
        AgentHelp,
        groups,
        row=row,
        id=strawberry.ID(str(row.id)),
        asked_at=row.asked_at,
        answered_at=row.answered_at,
        asked_of=Principal.of(row.asked_of_id, row.asked_of_name),
        answered_by=Principal.of(row.answered_by_id, row.answered_by_name),
        question=row.question,
        answer=row.answer,
    )
