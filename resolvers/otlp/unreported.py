"""Tasks a start marker opened whose span never came: once their trace has had no span for
`AGENTLOG_OTLP_WAIT_S`, the sweep ends them FAILED, "Its end was never reported.", with their ENDED line last."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from tortoise.transactions import in_transaction

from models import AgentTask, TraceEvent
from models.record.vocabulary import LineKind, TaskStatus
from resolvers.events.notices import ENDED_EVENTS, publish_tasks
from resolvers.otlp import store as waiting_spans
from resolvers.webhooks import outbox
from resolvers.write import sentences
from resolvers.write.append import append, lock_tree

NEVER_REPORTED = "Its end was never reported."


async def end_unreported(tenant: str, trace_id: str, now: datetime, since_us: int) -> list[AgentTask]:
    """Ends the trace's opened tasks that have waited since `since_us` or longer, deepest first, and tells it."""
    ended: list[AgentTask] = []
    async with in_transaction() as conn:
        await waiting_spans.lock_trace(conn, tenant, trace_id)
        opened = await waiting_spans.quiet_in_trace(conn, tenant, trace_id, since_us)
        if not opened:
            return []
        tasks = await AgentTask.filter(tenant=tenant, id__in=[uuid.UUID(t) for t in opened.values()]).using_db(conn)
        for task in sorted(tasks, key=lambda t: -t.depth):
            if task.status == TaskStatus.RUNNING:
                ended.append(await _fail(task, now, conn))
        await waiting_spans.closed(conn, tenant, trace_id, sorted(opened))
        if ended:
            owed = [outbox.task_event(ENDED_EVENTS[task.status], task) for task in ended]
            await outbox.owe(conn, tenant, await outbox.read_hooks(conn, tenant), owed)
    await publish_tasks([(ENDED_EVENTS[task.status], task) for task in ended])
    return ended


async def _fail(task: AgentTask, now: datetime, conn: Any) -> AgentTask:
    root = await lock_tree(task.root_id, task.tenant, conn)
    if task.id == root.id:
        task = root
    task.status, task.outcome, task.ended_at = TaskStatus.FAILED, NEVER_REPORTED, now
    await AgentTask.filter(id=task.id, tenant=task.tenant).using_db(conn).update(
        status=task.status, outcome=task.outcome, ended_at=task.ended_at)
    line = TraceEvent(kind=LineKind.ENDED, task_id=task.id, at=now, summary=sentences.ended(task.status))
    await append(root, line, conn)
    return task
