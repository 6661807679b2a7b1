"""`stopTask`: a person asks running work to stop. A STOP_ASKED line in its tree's record says who and why, the
root's row keeps the stop where every later write to the task or below it reads it (resolvers/control/stop_asks.py),
and AgentTaskStopAsked is told."""

from __future__ import annotations

from typing import Any

from models import AgentTask, TraceEvent
from models.errors import Forbidden, Unauthenticated
from models.record.vocabulary import LineKind
from permissions.access import Access
from permissions.principal import Principal
from resolvers.events.notices import publish_task
from resolvers.write import checks, sentences
from resolvers.control import stop_asks
from resolvers.webhooks import outbox
from resolvers.write.append import append, kit_unit, now, running_task, task_of

STOP_ASKED = "AgentTaskStopAsked"


def _person(principal: Principal | None) -> Principal:
    if principal is None:
        raise Unauthenticated("A bearer token is required.")
    if principal.kit:
        raise Forbidden("stopTask: work is stopped by a person, never by the kit.")
    return principal


async def stop_task(access: Access, data: dict[str, Any]) -> AgentTask:
    """Asks the task to stop. Stopping a task already asked to stop appends nothing and answers the task, whose
    `stopAsked` is still the first ask."""
    person = _person(access.principal)
    reason = checks.text("reason", data.get("reason"), required=True)
    found = await task_of(person.tenant, "task", data.get("task"), None)
    if not await access.stops(found):
        raise Forbidden("stopTask: only a supervisor of the task's agent, or who asked for the work, may stop it.")
    keyed = {**data, "by": person.sub}
    async with kit_unit(person, "stopTask", keyed, caller=_person) as unit:
        if unit.first is None:
            task, asked = await _ask_to_stop(person, data.get("task"), reason, unit.conn)
            unit.answered(str(task.id))
    if unit.first is not None:
        return await AgentTask.get(id=unit.first, tenant=person.tenant)
    if asked:
        await tell_stop_asked(task)
    return task


async def _ask_to_stop(person: Principal, task_id: str | None, reason: str, conn: Any) -> tuple[AgentTask, bool]:
    """The task, and whether this write asked it to stop (not when a stop was asked already)."""
    running = await running_task(person.tenant, "task", task_id, conn)
    task, root = running.task, running.root
    if stop_asks.of(root, task) is not None:
        return task, False
    by = {"id": person.sub, "name": person.name}
    at = now()
    root.stops = stop_asks.with_stop(root, task, by, reason, at)
    await AgentTask.filter(id=root.id, tenant=root.tenant).using_db(conn).update(stops=root.stops)
    line = TraceEvent(kind=LineKind.STOP_ASKED, task_id=task.id, at=at, summary=sentences.stop_asked(by, reason))
    await append(root, line, conn)
    if task.id == root.id:
        task.stops, task.chain_length, task.chain_head = root.stops, root.chain_length, root.chain_head
    await outbox.owe(conn, person.tenant, running.hooks, [outbox.task_event(STOP_ASKED, task, at=at)])
    return task, True


async def tell_stop_asked(task: AgentTask) -> None:
    """The one place a stop is told, after the write that recorded it."""
    await publish_task(STOP_ASKED, task)
