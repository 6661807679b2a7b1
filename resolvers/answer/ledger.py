"""The tenant's ledger (SPEC 9.3): every change to who may read or do what, and to what is kept, is also a
CONFIG_CHANGED line in a chain of the tenant's own, written in the same transaction as the change.

The ledger is an ordinary work tree, so `verifyTrace`, checkpoints, export and offline verification read it as any
tree: one root task (agent `agentlog`, skill `configuration`, its id derived from the tenant in `models/ledger.py`)
that stays open, made with its STARTED line on the first change. Each line's sentence says who changed what, and
its content is a JSON object `{"change", "by", ...}` holding what the change set, so the line's hash covers both.
Every change calls `record_change` on the connection of its own transaction: a change rolled back leaves no line.
"""

from __future__ import annotations

import json
from typing import Any

from models import AgentTask
from models.db import placeholders
from models.ledger import AGENT, SKILL, ledger_id
from models.record.vocabulary import LineKind
from permissions.access import Access
from permissions.principal import Principal
from resolvers.write import made_task, sentences
from resolvers.write.append import append_many, new_step, now
from resolvers.write.draft import LineDraft

KEEPER = {"id": AGENT, "name": AGENT}


def content_of(what: str, by: Principal, content: dict[str, Any]) -> str:
    """A ledger line's content: the change's name, who made it and what it set, as canonical JSON."""
    said = {"change": what, "by": {"id": by.sub, "name": by.name, "kit": by.kit}, **content}
    return json.dumps(said, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


async def record_change(conn: Any, tenant: str, by: Principal, what: str, content: dict[str, Any],
                        said: str | None = None) -> None:
    """Appends one CONFIG_CHANGED line to the tenant's ledger on `conn`, the change's own transaction.

    `what` names the change (the mutation, or `retention` for the sweep), `content` what it set, `said` the few
    words of its sentence ("defined the policies"); the ledger is made on its first change."""
    root = await ledger_root(tenant, conn)
    at = now()
    summary = sentences.config_changed({"id": by.sub, "name": by.name}, by.kit, said or f"made the change {what}")
    step = new_step(LineDraft(LineKind.CONFIG_CHANGED, summary, content_of(what, by, content)), str(root.id), at)
    await append_many(root, [step], conn)


INSERT_ONCE = "INSERT INTO \"agent_task\" ({names}) VALUES ({marks}) ON CONFLICT DO NOTHING"


async def ledger_root(tenant: str, conn: Any) -> AgentTask:
    """The tenant's ledger root, locked until the transaction ends; made, with its STARTED line, when missing.

    Two first changes racing both insert it; the database keeps one and the other waits for it, then finds it."""
    lid = ledger_id(tenant)
    root = await AgentTask.filter(id=lid, tenant=tenant).using_db(conn).select_for_update().first()
    if root is not None:
        return root
    made, started = made_task.new_task(tenant, AGENT, SKILL, KEEPER, now(), None, None, task_id=lid,
                                       summary=sentences.ledger_started(), cause="EVENT")
    names = ",".join(f'"{c}"' for c in made_task.COLUMNS)
    marks = ",".join(f"${i}" for i in range(1, len(made_task.COLUMNS) + 1))
    sql = INSERT_ONCE.format(names=names, marks=marks)
    await conn.execute_query(placeholders(conn, sql), list(made_task.stored_row(made)))
    root = await AgentTask.filter(id=lid, tenant=tenant).using_db(conn).select_for_update().get()
    if root.chain_length == 0:
        await append_many(root, [made_task.started_step(made, started)], conn)
    return root


async def ledger_of(access: Access) -> AgentTask | None:
    """The caller's tenant's ledger root, when it exists and the caller may read it (auditsAgents)."""
    if access.principal is None:
        return None
    row = await AgentTask.filter(id=ledger_id(access.principal.tenant), tenant=access.principal.tenant).first()
    if row is None or not await access.groups(row):
        return None
    return row
