"""Erasure, the only writer besides the kit: each erasure works on a whole tree in one transaction.

Every change is a bulk statement over the tree, so a tree of any length is erased without
loading its lines. Where a chain remains, one ERASED line is appended through the write path.
"""

from __future__ import annotations

import uuid
from enum import Enum
from datetime import datetime
from typing import Any

from tortoise.exceptions import DoesNotExist
from tortoise.transactions import in_transaction

from models import AgentHelp, AgentTask, ErasureRecord, IdempotencyKey, LlmCall, Review, SignedCheckpoint, TraceEvent
from models.record.chain import ERASED_SENTENCE, rfc3339
from models.db import placeholders
from models.ledger import is_ledger
from models.record.vocabulary import LineKind, TaskStatus
from permissions.access import Access
from permissions.principal import Principal
from resolvers.write import checks, sentences
from models.errors import BadInput, Forbidden, NotFound, Unauthenticated, WorkRunning
from resolvers.events.notices import publish_task
from resolvers.webhooks import outbox
from resolvers.read.tree import under_any
from resolvers.write.append import append, lock_tree, now
from resolvers.answer.holds import refuse_held
from resolvers.answer.ledger import record_change

MAX_LOG_PAGE = 500


class Erasure(str, Enum):
    CONTENT = "ERASE_AGENT_WORK_CONTENT"
    ANONYMISE = "ANONYMISE_AGENT_WORK"
    FORGET = "FORGET_AGENT_WORK"
    HELP = "ERASE_AGENT_HELP"


MUTATIONS = {
    Erasure.CONTENT: "eraseAgentWorkContent",
    Erasure.ANONYMISE: "anonymiseAgentWork",
    Erasure.FORGET: "forgetAgentWork",
    Erasure.HELP: "eraseAgentHelp",
}
SAID = {
    Erasure.CONTENT: "erased the content of the work",
    Erasure.ANONYMISE: "anonymised the work",
    Erasure.FORGET: "forgot the work",
}
WHICH = {
    Erasure.CONTENT: "The content of this work was erased",
    Erasure.ANONYMISE: "This work was anonymised",
}


async def eraser(access: Access, erasure: Erasure) -> Principal:
    """The caller, when they hold erasesAgentRecords; checked before any id is looked up."""
    principal = access.principal
    if principal is None:
        raise Unauthenticated("A bearer token is required.")
    if not await access.erases():
        raise Forbidden(f"{MUTATIONS[erasure]}: only a holder of erasesAgentRecords may erase.")
    return principal


def _id(field: str, value: str, noun: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError as exc:
        raise NotFound(f"{field}: no {noun} {value!r}.", field=field) from exc


async def ended_tree(tenant: str, task_id: str, conn: Any) -> tuple[AgentTask, AgentTask]:
    """The task and its tree's root, locked; refused while the tree is held or any task of it runs. The tenant's
    ledger is never erased: it is the record of erasures."""
    tid = _id("task", task_id, "task")
    task = None if is_ledger(tenant, tid) else await AgentTask.filter(id=tid, tenant=tenant).using_db(conn).first()
    if task is None:
        raise NotFound(f"task: no task {tid}.", field="task")
    try:
        root = await lock_tree(task.root_id, tenant, conn)
    except DoesNotExist as exc:
        raise NotFound(f"task: no task {tid}.", field="task") from exc
    await refuse_held(root, conn)
    running = await AgentTask.filter(root_id=root.id, tenant=tenant, status=TaskStatus.RUNNING).using_db(conn).first()
    if running is not None:
        raise WorkRunning(f"task: task {running.id} of this work is still running; erase it once all of it has ended.",
                          field="task")
    return task, root


TREE_TABLES = ("agent_task", "trace_event", "agent_help", "review")


async def forget_answers(tenant: str, root_id: uuid.UUID, conn: Any) -> None:
    """Drops the idempotency keys whose first answer is a row of this tree, or lines of it ("root:first:last"):
    their fingerprints are unsalted hashes of the kit's inputs, so they could confirm a guess of erased text."""
    rows = " UNION ALL ".join(
        f"SELECT CAST(id AS TEXT) FROM {table} WHERE tenant = ${n} AND root_id = ${n + 1}"
        for n, table in zip(range(2, 2 + 2 * len(TREE_TABLES), 2), TREE_TABLES)
    )
    values = [tenant, *[value for _ in TREE_TABLES for value in (tenant, str(root_id))]]
    sql = f"DELETE FROM idempotency_key WHERE tenant = $1 AND result_id IN ({rows})"
    await conn.execute_query(placeholders(conn, sql), values)
    await IdempotencyKey.filter(tenant=tenant, result_id__startswith=f"{root_id}:").using_db(conn).delete()


async def erase_content_of(root: AgentTask, at: datetime, conn: Any) -> int:
    lines = (
        await TraceEvent.filter(root_id=root.id, tenant=root.tenant, content_erased_at__isnull=True)
        .exclude(kind=LineKind.ERASED)
        .using_db(conn)
        .update(payload=None, payload_salt=None, content_erased_at=at)
    )
    tasks = AgentTask.filter(root_id=root.id, tenant=root.tenant).using_db(conn)
    await tasks.update(given=None, result=None, instructions_sent=None)
    await tasks.filter(content_erased_at__isnull=True).update(content_erased_at=at)
    await AgentHelp.filter(root_id=root.id, tenant=root.tenant).using_db(conn).update(question=None, answer=None, erased_at=at)
    await forget_answers(root.tenant, root.id, conn)
    return lines


async def anonymise(root: AgentTask, at: datetime, conn: Any) -> int:
    await AgentTask.filter(root_id=root.id, tenant=root.tenant).using_db(conn).update(
        requester_id=None, requester_name=None, about=None, trigger=None, outcome=None, entity_id=None,
        stops=None, anonymised_at=at,
    )
    await AgentHelp.filter(root_id=root.id, tenant=root.tenant).using_db(conn).update(
        asked_of_id=None, asked_of_name=None, answered_by_id=None, answered_by_name=None
    )
    await Review.filter(root_id=root.id, tenant=root.tenant).using_db(conn).update(note=None)
    lines = TraceEvent.filter(root_id=root.id, tenant=root.tenant, erased_at__isnull=True).using_db(conn)
    erased = await lines.count()
    await lines.update(summary=ERASED_SENTENCE, summary_salt=None, erased_at=at)
    return erased


ERASED_EVENT = "AgentWorkErased"


def erased_sentence(erasure: Erasure, at: datetime, by: Principal, entry: uuid.UUID) -> str:
    said = sentences.erased(WHICH[erasure], rfc3339(at), {"id": by.sub, "name": by.name})
    return f"{said} Why is kept in the erasure log, entry {entry}."


def log_entry(
    erasure: Erasure, by: Principal, at: datetime, lines: int, why: str | None, **about: Any
) -> ErasureRecord:
    return ErasureRecord(
        id=uuid.uuid4(), tenant=by.tenant, kind=erasure.value, why=why, by_id=by.sub, by_name=by.name, at=at,
        lines=lines, **about,
    )


async def _erase_work(access: Access, erasure: Erasure, task_id: str, why: str) -> int:
    by = await eraser(access, erasure)
    reason = checks.text("why", why, required=True)
    async with in_transaction() as conn:
        task, root = await ended_tree(by.tenant, task_id, conn)
        at = now()
        count = await erase_content_of(root, at, conn)
        if erasure is Erasure.ANONYMISE:
            count = await anonymise(root, at, conn)
        entry = log_entry(erasure, by, at, count, reason, root_id=root.id, task_id=task.id)
        line = TraceEvent(kind=LineKind.ERASED, task_id=root.id, at=at, summary=erased_sentence(erasure, at, by, entry.id))
        await append(root, line, conn)
        await entry.save(using_db=conn, force_create=True)
        await record_change(conn, by.tenant, by, MUTATIONS[erasure], _erased_said(task, root, count, entry),
                            f"{SAID[erasure]} {root.id}")
        await owe_erased(conn, task, reread=True)
    await publish_task("AgentWorkErased", await AgentTask.get(id=task.id, tenant=task.tenant))
    return count


async def owe_erased(conn: Any, task: AgentTask, reread: bool = False) -> None:
    """AgentWorkErased written to the outbox of the webhooks that want it, in the erasure's transaction; the task
    as the erasure left it (`reread`), or as it stood before it was forgotten."""
    hooks = await outbox.read_hooks(conn, task.tenant)
    if not hooks.want(ERASED_EVENT):
        return
    if reread:
        task = await AgentTask.get(id=task.id, tenant=task.tenant).using_db(conn)
    await outbox.owe(conn, task.tenant, hooks, [outbox.task_event(ERASED_EVENT, task)])


async def erase_work_content(access: Access, task_id: str, why: str) -> int:
    """Erases the content of the whole tree; returns the lines whose content was erased."""
    return await _erase_work(access, Erasure.CONTENT, task_id, why)


async def anonymise_work(access: Access, task_id: str, why: str) -> int:
    """Erases the content and the person from the whole tree; returns the lines whose sentence was erased."""
    return await _erase_work(access, Erasure.ANONYMISE, task_id, why)


async def forget_work(access: Access, task_id: str) -> int:
    """Deletes the whole tree and detaches its meter rows; returns the receipts deleted."""
    by = await eraser(access, Erasure.FORGET)
    async with in_transaction() as conn:
        task, root = await ended_tree(by.tenant, task_id, conn)
        receipts = await forget_tree(task, root, by, now(), None, conn, MUTATIONS[Erasure.FORGET])
        await owe_erased(conn, task)
    await publish_task("AgentWorkErased", task)
    return receipts


async def forget_tree(task: AgentTask, root: AgentTask, by: Principal, at: datetime, why: str | None, conn: Any,
                      change: str) -> int:
    """Deletes the locked, ended tree and detaches its meter rows, and logs it in the erasure log and, as `change`,
    in the tenant's ledger; returns the receipts deleted."""
    await forget_answers(root.tenant, root.id, conn)
    await LlmCall.filter(under_any("task_path", [root.path]), tenant=root.tenant).using_db(conn).update(
        task_id=None, task_path=None
    )
    tree = {"root_id": root.id, "tenant": root.tenant}
    lines = await TraceEvent.filter(**tree).using_db(conn).count()
    receipts = await AgentTask.filter(**tree).using_db(conn).count()
    await TraceEvent.filter(**tree).using_db(conn).delete()
    await AgentHelp.filter(**tree).using_db(conn).delete()
    await Review.filter(**tree).using_db(conn).delete()
    await AgentTask.filter(**tree).using_db(conn).delete()
    await SignedCheckpoint.filter(**tree).using_db(conn).delete()
    entry = log_entry(Erasure.FORGET, by, at, lines, why, root_id=root.id, task_id=task.id)
    await entry.save(using_db=conn, force_create=True)
    await record_change(conn, root.tenant, by, change, _erased_said(task, root, lines, entry),
                        f"{SAID[Erasure.FORGET]} {root.id}")
    return receipts


def _erased_said(task: AgentTask, root: AgentTask, lines: int, entry: ErasureRecord) -> dict[str, Any]:
    """What the ledger records of an erasure: the work, the lines it reached, and its entry in the erasure log, which
    keeps why (the ledger is never erased, so it holds no words an erasure might have to take back)."""
    return {"task": str(task.id), "root": str(root.id), "lines": lines, "erasureLogEntry": str(entry.id)}


async def erase_help(access: Access, help_id: str, why: str) -> bool:
    """Erases one help request asked outside any work: its question, answer and people."""
    by = await eraser(access, Erasure.HELP)
    reason = checks.text("why", why, required=True)
    hid = _id("help", help_id, "help request")
    async with in_transaction() as conn:
        help = await AgentHelp.filter(id=hid, tenant=by.tenant).using_db(conn).select_for_update().first()
        if help is None:
            raise NotFound(f"help: no help request {hid}.", field="help")
        if help.task_id is not None:
            raise BadInput(
                f"help: help request {hid} was asked inside work (task {help.task_id}); "
                "erase it with eraseAgentWorkContent or anonymiseAgentWork on that work.", field="help",
            )
        at = now()
        await AgentHelp.filter(id=hid, tenant=by.tenant).using_db(conn).update(
            question=None, answer=None, asked_of_id=None, asked_of_name=None, answered_by_id=None,
            answered_by_name=None, erased_at=at,
        )
        await IdempotencyKey.filter(tenant=by.tenant, result_id=str(hid)).using_db(conn).delete()
        entry = log_entry(Erasure.HELP, by, at, 0, reason, help_id=hid)
        await entry.save(using_db=conn, force_create=True)
        await record_change(conn, by.tenant, by, MUTATIONS[Erasure.HELP],
                            {"help": str(hid), "erasureLogEntry": str(entry.id)}, f"erased the help request {hid}")
    return True


async def erasure_log(access: Access, first: int) -> list[ErasureRecord]:
    """The tenant's erasures, newest first, for auditsAgents and erasesAgentRecords; nobody else sees a row."""
    if first < 1 or first > MAX_LOG_PAGE:
        raise BadInput(f"first: ask for 1 to {MAX_LOG_PAGE} erasures, not {first}.", field="first")
    if access.principal is None or not await access.reads_erasure_log():
        return []
    return await ErasureRecord.filter(tenant=access.principal.tenant).order_by("-at", "-id").limit(first)
