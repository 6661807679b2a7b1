"""`session`: one conversation's turns as the caller may see them, with its spend summed from the meter.

Two statements: the session's tasks the caller may see (a turn is one whose parent is not among them), and one
grouped sum over the meter rows of those same tasks. A reader who may see none of it gets nothing, as if the
session did not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from models.record.vocabulary import TaskStatus
from permissions.access import Access
from resolvers.read.rows import ReadQuery, TaskRow, read_tasks
from resolvers.read.task_list import TaskFilter, conditions
from resolvers.write import checks

MAX_TURNS = 500


@dataclass
class SessionRead:
    id: str
    turns: list[TaskRow]
    task_count: int
    cost_micros: int
    input_tokens: int
    output_tokens: int
    model_calls: int
    failed_tasks: int
    started_at: datetime | None
    ended_at: datetime | None
    more_turns: bool


async def read_session(access: Access, session_id: str) -> SessionRead | None:
    checks.name("id", session_id, required=True)
    caller = await access.list_scope()
    if caller is None:
        return None
    flt = TaskFilter(session=session_id)
    q = ReadQuery()
    tasks = await read_tasks(q, conditions(q, caller, flt), "started_at ASC, id ASC")
    if not tasks:
        return None
    ids = {t.id for t in tasks}
    turns = [t for t in tasks if t.parent_id not in ids]

    s = ReadQuery()
    [(micros, input_tokens, output_tokens, calls)] = await s.rows(
        "SELECT COALESCE(SUM(l.cost_micros), 0), COALESCE(SUM(l.input_tokens), 0), COALESCE(SUM(l.output_tokens), 0), "
        f"COUNT(l.id) FROM llm_call l WHERE l.tenant = {s.param(caller.tenant)} "
        f"AND l.task_id IN (SELECT id FROM agent_task WHERE {conditions(s, caller, flt)})"
    )
    ended = [t.ended_at for t in tasks if t.ended_at is not None]
    return SessionRead(
        id=session_id,
        turns=turns[:MAX_TURNS],
        task_count=len(tasks),
        cost_micros=int(micros),
        input_tokens=int(input_tokens),
        output_tokens=int(output_tokens),
        model_calls=int(calls),
        failed_tasks=sum(1 for t in tasks if t.status == TaskStatus.FAILED),
        started_at=tasks[0].started_at,
        ended_at=max(ended) if len(ended) == len(tasks) else None,
        more_turns=len(turns) > MAX_TURNS,
    )
