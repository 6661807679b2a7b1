from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry

from graph.types.agent_task import AgentTask


@strawberry.enum(description="What happened to a task.")
class TaskEventName(Enum):
    AgentTaskStarted = "AgentTaskStarted"
    AgentTaskFinished = "AgentTaskFinished"
    AgentTaskFailed = "AgentTaskFailed"
    AgentTaskStopped = "AgentTaskStopped"
    AgentWorkErased = "AgentWorkErased"
    AgentTaskStopAsked = "AgentTaskStopAsked"
    AgentTaskBudgetCrossed = "AgentTaskBudgetCrossed"


@strawberry.type(description="Something that happened to a task the subscriber may read.")
class TaskEvent:
    event: TaskEventName = strawberry.field(description="What happened: started, finished (DONE), failed, stopped, erased, asked to stop, past a share of its budget.")
    task: AgentTask = strawberry.field(
        description="The task as the subscriber may read it now; for work since forgotten, its figures as they stood."
    )
    at: datetime = strawberry.field(description="When it happened (UTC).")
    share: int | None = strawberry.field(
        default=None, description="For AgentTaskBudgetCrossed: the share of the task's limitMicros its all-in spend "
        "passed, in percent (80 or 100); null otherwise."
    )
