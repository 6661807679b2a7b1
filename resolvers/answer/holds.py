"""Legal holds (SPEC 9.3): while a tree is held, no erasure and no retention sweep touches it.

`holdWork` and `releaseHold` each change the tree's `work_hold` row and append a HELD or RELEASED line to its
root's record, naming who and why, and a line of the tenant's ledger, in one transaction through the write path
(`change_hold`); erasure asks `refuse_held` under the tree's lock.
"""

from __future__ import annotations

from typing import Any

from tortoise.exceptions import DoesNotExist

from models import AgentTask, WorkHold
from models.errors import Conflict, Forbidden, NotFound
from models.record.vocabulary import LineKind
from permissions.access import Access
from permissions.principal import Principal
from resolvers.write import checks, sentences
from resolvers.answer.ledger import record_change
from resolvers.write.append import append_many, keyed_unit, lock_tree, new_step, now, require_person, task_of
from resolvers.write.draft import LineDraft

HELD = "HELD"


async def refuse_held(root: AgentTask, conn: Any) -> None:
    """FORBIDDEN, with `extensions.reason = HELD`, while the tree is held."""
    hold = await WorkHold.filter(root_id=root.id, tenant=root.tenant).using_db(conn).first()
    if hold is not None:
        raise Forbidden(f"task: this work is held ({hold.reason}); nothing erases it until the hold is released.",
                        field="task", reason=HELD)


async def holder(access: Access, operation: str) -> Principal:
    person = require_person(access.principal, operation)
    if not await access.holds():
        raise Forbidden(f"{operation}: only a person holding a role holdsRecords names may hold or release work.")
    return person


async def hold_work(access: Access, data: dict[str, Any]) -> AgentTask:
    return await change_hold(await holder(access, "holdWork"), "holdWork", data, True)


async def release_hold(access: Access, data: dict[str, Any]) -> AgentTask:
    return await change_hold(await holder(access, "releaseHold"), "releaseHold", data, False)


async def change_hold(by: Principal, operation: str, data: dict[str, Any], holding: bool) -> AgentTask:
    """Holds or releases the tree of `data["task"]`; returns that task."""
    reason = checks.text("reason", data.get("reason"), required=True)
    async with keyed_unit(by, operation, data) as unit:
        if unit.first is None:
            task = await _change_hold(by, operation, data.get("task"), reason, holding, unit.conn)
            unit.answered(str(task.id))
    if unit.first is not None:
        return await AgentTask.get(id=unit.first, tenant=by.tenant)
    return task


async def _change_hold(by: Principal, operation: str, task_id: str | None, reason: str, holding: bool,
                       conn: Any) -> AgentTask:
    task = await task_of(by.tenant, "task", task_id, conn)
    try:
        root = await lock_tree(task.root_id, by.tenant, conn)
    except DoesNotExist as exc:
        raise NotFound(f"task: no task {task.id}.", field="task") from exc
    hold = await WorkHold.filter(root_id=root.id, tenant=root.tenant).using_db(conn).first()
    at, person = now(), {"id": by.sub, "name": by.name}
    if holding:
        if hold is not None:
            raise Conflict(f"task: this work is already held, since {hold.at.isoformat()}.", field="task")
        await WorkHold.create(root_id=root.id, tenant=root.tenant, by_id=by.sub, by_name=by.name, reason=reason,
                              at=at, using_db=conn)
        line = new_step(LineDraft(LineKind.HELD, sentences.held(person, reason), None), str(root.id), at)
    else:
        if hold is None:
            raise Conflict("task: this work is not held.", field="task")
        await WorkHold.filter(root_id=root.id, tenant=root.tenant).using_db(conn).delete()
        line = new_step(LineDraft(LineKind.RELEASED, sentences.released(person, reason), None), str(root.id), at)
    await append_many(root, [line], conn)
    said = f"held the work {root.id}" if holding else f"released the hold on the work {root.id}"
    await record_change(conn, by.tenant, by, operation, {"task": str(task.id), "root": str(root.id),
                                                         "reason": reason}, said)
    return task


async def holds_of(tenant: str, root_ids: list) -> dict:
    """The hold on each of these roots, where there is one."""
    return {hold.root_id: hold for hold in await WorkHold.filter(tenant=tenant, root_id__in=list(root_ids))}
