"""The one write path: lock the tree, check, hash, append, move the head, in one transaction.

Every kit mutation is one `kit_unit`, which also honours idempotency keys; every line, whether a kit
mutation's, a batch's or an OTLP span's, is appended by `append_many`, and every task a kit or a span starts
is made by `made_task.new_task` and stored by `insert_rows`. Erasure is the only other writer.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from operator import attrgetter
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

import asyncpg
from tortoise.exceptions import IntegrityError
from tortoise.transactions import in_transaction

from models import AgentTask, IdempotencyKey, TraceEvent
from models.ledger import is_ledger
from models.record.chain import Line, seal
from models.db import placeholders
from models.line_columns import BESIDE, FIGURES, INSERTED, SEALED_FIELDS
from permissions.principal import Principal
from resolvers import metrics
from resolvers.write import checks
from resolvers.control import budgets, stop_asks
from resolvers.webhooks.wanted import NO_HOOKS, Hooks, hooks_column, hooks_of
from resolvers.write.draft import LineDraft
from resolvers.write.checkpoints import KEEP, note_for, refused, sign_head
from resolvers.write.fingerprint import fingerprint
from resolvers.write.one_statement import Statement, insert, together
from resolvers.write.pipeline import Pipeline
from models.errors import Conflict, Forbidden, NotFound, Unauthenticated
from models.record.vocabulary import TaskStatus


def now() -> datetime:
    return datetime.now(timezone.utc)


def require_kit(principal: Principal | None) -> Principal:
    if principal is None:
        raise Unauthenticated("A bearer token is required.")
    if not principal.kit:
        raise Forbidden("Only a kit token may write the record.")
    return principal


def require_person(principal: Principal | None, operation: str) -> Principal:
    """A person signed in: what a person answers for (a review, a hold) is never the kit's to say."""
    if principal is None:
        raise Unauthenticated("A bearer token is required.")
    if principal.kit:
        raise Forbidden(f"{operation}: only a person may do this, never the kit.")
    return principal


Caller = Callable[[Principal | None], Principal]


class Unit:
    """One write in one transaction, by `writer` on `conn`. `first` is the id of the first answer when the
    idempotency key was sent before: then the write is not made again, and its caller answers as it did then.
    Otherwise the caller makes the write and says which answer it gave (`answered`), for a retry to find."""

    __slots__ = ("writer", "conn", "first", "result_id")

    def __init__(self, writer: Principal) -> None:
        self.writer, self.conn = writer, None
        self.first: str | None = None
        self.result_id: str | None = None

    def answered(self, result_id: str) -> None:
        self.result_id = result_id


def kit_unit(principal: Principal | None, operation: str, data: dict[str, Any],
             caller: Caller = require_kit) -> AbstractAsyncContextManager[Unit]:
    """One write by the writer `caller` admits (the kit, unless told otherwise), honouring its idempotency key."""
    return keyed_unit(caller(principal), operation, data)


@asynccontextmanager
async def keyed_unit(writer: Principal, operation: str, data: dict[str, Any]) -> AsyncIterator[Unit]:
    """One write in one transaction; a retried idempotency key finds the first answer instead.

    The key is looked up on the transaction's connection before the write is made and remembered after it, so a
    write with a key costs two small statements more than one without. Two writes racing with one key: the
    second's transaction fails on the key, and it finds the first's answer. A person's key is bound to them:
    the same key sent by another person is a conflict, never their answer."""
    key = checks.name("idempotencyKey", data.pop("idempotency_key", None))
    bound = data if writer.kit else {**data, "by": writer.sub}
    print_ = fingerprint(operation, bound) if key is not None else ""
    unit = Unit(writer)
    try:
        async with in_transaction() as conn:
            unit.conn = conn
            if key is not None:
                unit.first = await _first_answer(writer.tenant, key, print_, conn)
            yield unit
            if key is not None and unit.first is None:
                await IdempotencyKey.create(
                    tenant=writer.tenant, key=key, fingerprint=print_, result_id=unit.result_id, using_db=conn
                )
    except IntegrityError:
        if key is None:
            raise
        async with in_transaction() as conn:
            unit.first = await _first_answer(writer.tenant, key, print_, conn)
        if unit.first is None:
            raise


FIRST_ANSWER = 'SELECT "fingerprint", "result_id" FROM "idempotency_key" WHERE "tenant" = $1 AND "key" = $2'


async def _first_answer(tenant: str, key: str, print_: str, conn: Any) -> str | None:
    """The id of the first answer given to this key, or None for a new key; the key sent with other input is
    a conflict."""
    rows = await conn.execute_query_dict(placeholders(conn, FIRST_ANSWER), [tenant, key])
    if not rows:
        return None
    if rows[0]["fingerprint"] != print_:
        raise Conflict("idempotencyKey: this key was already used with a different input.", field="idempotencyKey")
    return rows[0]["result_id"]


async def task_of(tenant: str, field: str, task_id: str, conn: Any) -> AgentTask:
    """The task in the caller's tenant; another tenant's task is as unknown as one that never existed, and so is the
    tenant's ledger, which only the changes it records write to."""
    tid = checks.uuid_of(field, task_id)
    task = None if is_ledger(tenant, tid) else await AgentTask.filter(id=tid, tenant=tenant).using_db(conn).first()
    if task is None:
        raise NotFound(f"{field}: no task {tid}.", field=field)
    return task


async def lock_tree(root_id: uuid.UUID, tenant: str, conn: Any) -> AgentTask:
    """Locks the tree's root row until the transaction ends; appends to one tree queue here."""
    return await AgentTask.filter(id=root_id, tenant=tenant).using_db(conn).select_for_update().get()


LOCK_ROOT_OF = (
    'SELECT "root".*, (SELECT "agent"."logging" FROM "agent" JOIN "agent_task" AS "task" ON "agent"."name" = '
    '"task"."agent" WHERE "agent"."tenant" = $1 AND "task"."tenant" = $2 AND "task"."id" = $3) AS "agent_logging", '
    '{hooks} AS "hooks" FROM "agent_task" AS "root" WHERE "root"."tenant" = $5 '
    'AND "root"."id" = (SELECT "root_id" FROM "agent_task" WHERE "id" = $6 AND "tenant" = $7)'
)


@lru_cache(maxsize=4)
def lock_root_of(dialect: str) -> str:
    """The root found and locked, with the agent's logging and the tenant's webhooks (resolvers/webhooks/wanted.py)."""
    locking = ' FOR UPDATE OF "root"' if dialect == "postgres" else ""
    return LOCK_ROOT_OF.format(hooks=hooks_column(dialect, 4)) + locking


@dataclass(frozen=True, slots=True)
class Running:
    """A running task, re-read under its tree's lock; the locked root; the logging mode of the task's agent (None
    for an agent that is not registered, as a span's may not be); the tenant's webhooks, as the lock read them."""

    task: AgentTask
    root: AgentTask
    logging: str | None
    limits: tuple[budgets.Budget, ...] = ()
    hooks: Hooks = NO_HOOKS


async def running_task(tenant: str, field: str, task_id: str, conn: Any, metered: bool = False) -> Running:
    """The task under its tree's lock. An ended task takes no more lines.

    The root is found and locked, and the agent's logging read, in one statement, written out because it runs on
    every append; a sub-task is read once more, under the lock. The logging mode is read as the statement began,
    before any wait for the lock: a registerAgent answered before this write was sent is seen. For a write that
    `metered` model calls, the budgets of the task and of those above it come with it (for a sub-task, with its
    re-read).
    """
    tid = checks.uuid_of(field, task_id)
    rows = await conn.execute_query_dict(
        placeholders(conn, lock_root_of(conn.capabilities.dialect)),
        [tenant, tenant, str(tid), tenant, tenant, str(tid), tenant],
    )
    if not rows or is_ledger(tenant, rows[0]["id"]):
        raise NotFound(f"{field}: no task {tid}.", field=field)
    logging = rows[0].pop("agent_logging")
    hooks = hooks_of(rows[0].pop("hooks"))
    root = AgentTask._init_from_db(**rows[0])
    limits: tuple[budgets.Budget, ...] = ()
    if root.id == tid:
        task = root
        limits = budgets.of_root(root) if metered else ()
    elif metered:
        sql = budgets.task_with_limits(conn.capabilities.dialect)
        found = await conn.execute_query_dict(placeholders(conn, sql), [tenant, str(tid), tenant])
        limits = budgets.limits_of(found[0].pop("limits_above"))
        task = AgentTask._init_from_db(**found[0])
    else:
        task = await AgentTask.filter(id=tid, tenant=tenant).using_db(conn).get()
    if task.status != TaskStatus.RUNNING:
        raise Conflict(f"{field}: task {task.id} has ended ({task.status}); it takes no more lines.", field=field)
    stop_asks.heard(root, task)
    return Running(task, root, logging, limits, hooks)


MOVE_HEAD = 'UPDATE "agent_task" SET "chain_length"=$1, "chain_head"=$2 WHERE "id"=$3 AND "tenant"=$4'


async def move_head(root: AgentTask, length: int, head: str, conn: Any) -> None:
    root.chain_length, root.chain_head = length, head
    await conn.execute_query(placeholders(conn, MOVE_HEAD), [length, head, str(root.id), root.tenant])


@dataclass(slots=True)
class Step:
    """A line about to be appended: what the chain covers, and the three fields it does not."""

    line: Line
    withheld: str | None = None
    call_id: uuid.UUID | None = None
    by_tool: str | None = None


def new_step(draft: LineDraft, task: str, at: datetime, withheld: str | None = None,
             call_id: uuid.UUID | None = None) -> Step:
    """The draft as a step of `task` at `at`, its line not sealed yet; a line withheld keeps no payload."""
    line = Line(
        seq=0, kind=draft.kind, task=task, at=at, summary=draft.summary,
        payload=None if withheld else draft.payload, summary_salt=None, payload_salt=None, summary_hash="",
        payload_hash="", prev_hash="", hash="", model=draft.model, route_rule=draft.route_rule,
        attempts=draft.attempts, cost_micros=draft.cost_micros, input_tokens=draft.input_tokens,
        output_tokens=draft.output_tokens, tool=draft.tool, tool_call_id=draft.tool_call_id,
        is_error=draft.is_error, duration_ms=draft.duration_ms,
    )
    return Step(line, withheld, call_id, draft.by_tool)


LINE_COLUMNS = INSERTED
_sealed = attrgetter(*SEALED_FIELDS)
_beside = attrgetter(*BESIDE)


def stored_row(tenant: str, root_id: str, step: Step) -> tuple:
    """A sealed step as the row LINE_COLUMNS names; ids as text."""
    beside = tuple(str(v) if isinstance(v, uuid.UUID) else v for v in _beside(step))
    return (tenant, root_id, *beside, *_sealed(step.line))


COPY_FROM = 20


async def insert_rows(conn: Any, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """Rows in one go on the transaction's connection: COPY on PostgreSQL from COPY_FROM rows on (it costs a
    round trip more than an INSERT), executemany otherwise.

    Ids travel as text, which both databases take.
    """
    if conn.capabilities.dialect == "postgres" and len(rows) >= COPY_FROM:
        async with conn.acquire_connection() as raw:
            try:
                await raw.copy_records_to_table(table, records=rows, columns=columns)
            except asyncpg.IntegrityConstraintViolationError as exc:
                raise IntegrityError(exc) from exc
        return
    marks = ",".join(f"${i}" for i in range(1, len(columns) + 1))
    names = ",".join(f'"{c}"' for c in columns)
    await conn.execute_many(placeholders(conn, f'INSERT INTO "{table}" ({names}) VALUES ({marks})'), rows)


def seal_steps(tenant: str, root_id: str, steps: list[Step], seq: int, head: str) -> tuple[list[tuple], int, str]:
    """Seals the lines in order after `head` at `seq`; returns their rows in LINE_COLUMNS order, and the new
    length and head. Their salts are drawn from the system's randomness in one read."""
    rows = []
    salts = os.urandom(32 * len(steps)).hex()
    for at, step in enumerate(steps):
        seq += 1
        line = step.line
        line.seq = seq
        seal(line, head, salts[64 * at:64 * at + 64])
        head = line.hash
        rows.append(stored_row(tenant, root_id, step))
    return rows, seq, head


async def settle_head(root: AgentTask, length: int, head: str, added: int, conn: Any,
                      spend: budgets.Spend | None = None) -> None:
    """After `added` sealed lines are stored: the tree's head moved once, and signed; on PostgreSQL, when no
    budget's spend is to be read, in one statement."""
    if spend is None and conn.capabilities.dialect == "postgres":
        root_id = str(root.id)
        moved = Statement(MOVE_HEAD, [length, head, root_id, root.tenant])
        keep = Statement(KEEP, [root_id, root.tenant, length, head, note_for(root.tenant, root_id, length, head)])
        statement = together([moved], keep)
        if not await conn.execute_query_dict(statement.sql, statement.args):
            raise refused(root_id, length, head)
        root.chain_length, root.chain_head = length, head
    else:
        await move_head(root, length, head, conn)
        await sign_head(root, conn, spend)
    metrics.lines_appended(root.tenant, added)


def stored_at_once(conn: Any, lines: int) -> bool:
    """Whether `lines` lines are stored in one statement with the head, its checkpoint and the writes beside
    them: on PostgreSQL, below COPY_FROM lines (from there COPY stores them faster)."""
    return conn.capabilities.dialect == "postgres" and lines < COPY_FROM


async def store_at_once(root: Any, rows: list[tuple], length: int, head: str, beside: Sequence[Statement],
                        conn: Any, spend: budgets.Spend | None = None) -> None:
    """The writes beside the lines, the sealed lines, the head moved and signed, in one round trip; given
    `spend`, the same statement reads what each budget had spent, before the meter rows it stores."""
    root_id = str(root.id)
    note = note_for(root.tenant, root_id, length, head)
    moved = Statement(MOVE_HEAD, [length, head, root_id, root.tenant])
    writes = [*beside, insert("trace_event", LINE_COLUMNS, rows), moved]
    keep = Statement(KEEP, [root_id, root.tenant, length, head, note])
    if spend is not None:
        returning = budgets.spent_returning("postgres", len(spend.budgets), len(keep.args) + 1, len(spend.calls))
        keep = Statement(KEEP + returning, keep.args + budgets.spent_args("postgres", root.tenant, spend, spend.calls))
    statement = together(writes, keep)
    answered = await conn.execute_query_dict(statement.sql, statement.args)
    if not answered:
        raise refused(root_id, length, head)
    if spend is not None:
        budgets.read_spent(spend, answered[0], counted=False)
    root.chain_length, root.chain_head = length, head
    metrics.lines_appended(root.tenant, len(rows))


SEAL_EVERY = 8
SEND_FROM = 250


async def append_many(
    root: Any, steps: list[Step], conn: Any, db: Pipeline | None = None, beside: Sequence[Statement] = (),
    spend: budgets.Spend | None = None,
) -> list[tuple]:
    """Seals the lines in order after the tree's head, stores them in one statement, moves the head once and
    signs it; returns the rows as stored, in LINE_COLUMNS order. `beside` are writes made before the lines, in
    the same transaction (with the lines and the head in one statement, when `stored_at_once`).

    Given a pipeline on `conn`, every statement goes through it, and the lines are sealed SEAL_EVERY at a time
    and sent SEND_FROM rows at a time, so the database stores one chunk while the next is hashed; then nothing
    is returned. Given `spend` (without a pipeline), the statement that signs the head also reads its budgets'
    spend (resolvers/control/budgets.py)."""
    if db is None:
        rows, length, head = seal_steps(root.tenant, str(root.id), steps, root.chain_length, root.chain_head)
        if stored_at_once(conn, len(rows)):
            await store_at_once(root, rows, length, head, beside, conn, spend)
            return rows
        for write in beside:
            await conn.execute_query(placeholders(conn, write.sql), write.args)
        await insert_rows(conn, "trace_event", LINE_COLUMNS, rows)
        await settle_head(root, length, head, len(rows), conn, spend)
        return rows
    for write in beside:
        db.send(conn.execute_query(placeholders(conn, write.sql), write.args))
    length, head, rows = root.chain_length, root.chain_head, []
    for at in range(0, len(steps), SEAL_EVERY):
        more, length, head = seal_steps(root.tenant, str(root.id), steps[at:at + SEAL_EVERY], length, head)
        rows += more
        if len(rows) >= SEND_FROM or at + SEAL_EVERY >= len(steps):
            db.send(insert_rows(conn, "trace_event", LINE_COLUMNS, rows))
            rows = []
        await db.breathe()
    db.send(settle_head(root, length, head, len(steps), conn))
    return []


def step_of(event: TraceEvent) -> Step:
    """An unsaved line row as a step for `append_many`, its payload as the row holds it."""
    line = Line(
        seq=0, kind=event.kind, task=str(event.task_id), at=event.at, summary=event.summary, payload=event.payload,
        summary_salt=None, payload_salt=None, summary_hash="", payload_hash="", prev_hash="", hash="",
        **{name: getattr(event, name) for name in FIGURES},
    )
    return Step(line, event.withheld, event.call_id, event.by_tool)


async def append(root: AgentTask, event: TraceEvent, conn: Any) -> None:
    """One line, given as an unsaved row, appended exactly as `append_many` appends."""
    await append_many(root, [step_of(event)], conn)
