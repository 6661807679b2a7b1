"""`tasks`: the tasks a caller sees, filtered, ordered, counted and searched in one statement each.

A caller with a standing capability sees the whole tenant. A person without one sees the trees under the
tasks they asked for, found by a correlated EXISTS on the requester index, so the statement does not grow
with the number of tasks they asked for. Cursors are bound to the tenant, order and filter they came from.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from strawberry.utils.str_converters import to_camel_case

from models.errors import BadInput, Forbidden
from models.ledger import AGENT as LEDGER_AGENT, ledger_id
from permissions.access import Access, Group, ListScope
from resolvers.write import checks
from resolvers.read import search
from resolvers.read.rows import ReadQuery, TaskRow, read_tasks

MAX_PAGE = 500
MAX_LISTED = 100


class TaskOrder(str, Enum):
    STARTED_AT_DESC = "STARTED_AT_DESC"
    STARTED_AT_ASC = "STARTED_AT_ASC"
    ENDED_AT_DESC = "ENDED_AT_DESC"


@dataclass
class TaskFilter:
    agent: str | None = None
    skill: str | None = None
    status: str | None = None
    requester: str | None = None
    session: str | None = None
    roots_only: bool = False
    started_after: datetime | None = None
    started_before: datetime | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    workflow_run: str | None = None
    model: str | None = None
    status_in: list[str] | None = None
    agent_in: list[str] | None = None
    search: str | None = None
    verdict: str | None = None


EQUAL = ("agent", "skill", "status", "session", "entity_type", "entity_id", "workflow_run")
COLUMN = {"requester": "requester_id"}
WORDS_FILTERS = ("requester", "entity_id")


@dataclass
class TaskPage:
    rows: list[TaskRow]
    more: bool
    cursor: Callable[[TaskRow], str]
    total: Callable[[], Awaitable[int]]


def _asked_by(q: ReadQuery, tenant: str, sub: str) -> str:
    """The task is one `sub` asked for or lies under one: each asked-for task's subtree is one range scan of
    the path index (the paths from "path/" up to "path0", '0' following '/'). A path starts with its root's
    id, so what lies under a task of the tenant is of the tenant too. On PostgreSQL the set is taken once, as
    an array, and its tasks found by key: planned as a join, statistics that lag behind a large import (a
    fresh table, a new shard) made PostgreSQL run the subtree scan again for every task of the tenant."""
    above, below = ("~>=~", "~<~") if q.postgres else (">=", "<")
    under = "d.tenant" if q.postgres else "+d.tenant"
    asked = (
        f"SELECT r.id FROM agent_task r WHERE r.tenant = {q.param(tenant)} AND r.requester_id = {q.param(sub)} "
        "UNION ALL SELECT d.id FROM agent_task r JOIN agent_task d "
        f"ON {under} = r.tenant AND d.path {above} (r.path || '/') AND d.path {below} (r.path || '0') "
        f"WHERE r.tenant = {q.param(tenant)} AND r.requester_id = {q.param(sub)}"
    )
    return f"id = ANY(ARRAY({asked}))" if q.postgres else f"id IN ({asked})"


def check(flt: TaskFilter, first: int) -> None:
    if first < 1 or first > MAX_PAGE:
        raise BadInput(f"first: ask for 1 to {MAX_PAGE} tasks, not {first}.", field="first")
    for field in (*EQUAL, "requester", "model"):
        checks.name(f"filter.{to_camel_case(field)}", getattr(flt, field))
    for field in ("status_in", "agent_in"):
        values = getattr(flt, field)
        if values is not None:
            if not 1 <= len(values) <= MAX_LISTED:
                raise BadInput(f"filter.{to_camel_case(field)}: give 1 to {MAX_LISTED} values, not {len(values)}.",
                               field=f"filter.{to_camel_case(field)}")
            for value in values:
                checks.name(f"filter.{to_camel_case(field)}", value)
    if flt.search is not None:
        search.check(flt.search)


FILTER_GROUPS = {**{field: Group.WORDS for field in WORDS_FILTERS}, "verdict": Group.SENTENCES}


async def refuse_unreadable_filters(access: Access, flt: TaskFilter) -> None:
    """A filter on a field the caller may not read is FORBIDDEN: it would tell them what they may not read."""
    for field, group in FILTER_GROUPS.items():
        if getattr(flt, field) is not None and not await access.may_filter_on(group):
            raise Forbidden(f"filter.{to_camel_case(field)}: you may not read it on tasks, so you may not filter by it.",
                                field=f"filter.{to_camel_case(field)}")


def lists_ledger(caller: ListScope, flt: TaskFilter) -> bool:
    """Whether the list may hold the tenant's ledger: it is no agent's work, so it is listed only when the filter
    names its agent, `agentlog`, and only to those who read it."""
    return caller.ledger and LEDGER_AGENT in (flt.agent, *(flt.agent_in or ()))


def conditions(q: ReadQuery, caller: ListScope, flt: TaskFilter, paged: bool = False) -> str:
    terms = [f"tenant = {q.param(caller.tenant)}"]
    if caller.asker is not None:
        terms.append(_asked_by(q, caller.tenant, caller.asker))
    if not lists_ledger(caller, flt):
        terms.append(f"id <> {q.param(str(ledger_id(caller.tenant)))}")
    for field in (*EQUAL, "requester"):
        value = getattr(flt, field)
        if value is not None:
            terms.append(f"{COLUMN.get(field, field)} = {q.param(value)}")
    if flt.status_in is not None:
        terms.append(q.one_of("status", flt.status_in))
    if flt.agent_in is not None:
        terms.append(q.one_of("agent", flt.agent_in))
    if flt.roots_only:
        terms.append("parent_id IS NULL")
    if flt.started_after is not None:
        terms.append(f"started_at > {q.param(flt.started_after)}")
    if flt.started_before is not None:
        terms.append(f"started_at < {q.param(flt.started_before)}")
    if flt.model is not None:
        terms.append(
            f"id IN (SELECT l.task_id FROM llm_call l WHERE l.tenant = {q.param(caller.tenant)} "
            f"AND l.model = {q.param(flt.model)})"
        )
    if flt.verdict is not None:
        terms.append(
            f"id IN (SELECT r.task_id FROM review r WHERE r.tenant = {q.param(caller.tenant)} "
            f"AND r.verdict = {q.param(flt.verdict)})"
        )
    if flt.search is not None:
        terms.append(search.matches(q, caller, flt.search, lambda: _asked_by(q, caller.tenant, caller.sub), paged))
    return " AND ".join(terms)


ORDER_SQL = {
    TaskOrder.STARTED_AT_DESC: "started_at DESC, id DESC",
    TaskOrder.STARTED_AT_ASC: "started_at ASC, id ASC",
    TaskOrder.ENDED_AT_DESC: "ended_at DESC NULLS LAST, id DESC",
}


def _key(order: TaskOrder, row: TaskRow) -> datetime | None:
    return row.ended_at if order is TaskOrder.ENDED_AT_DESC else row.started_at


def _past(q: ReadQuery, order: TaskOrder, at: datetime | None, tid: uuid.UUID) -> str:
    """The rows after the cursor's row in `order`."""
    if order is TaskOrder.STARTED_AT_ASC:
        return f"(started_at > {q.param(at)} OR (started_at = {q.param(at)} AND id > {q.param(tid)}))"
    if order is TaskOrder.STARTED_AT_DESC:
        return f"(started_at < {q.param(at)} OR (started_at = {q.param(at)} AND id < {q.param(tid)}))"
    if at is None:
        return f"(ended_at IS NULL AND id < {q.param(tid)})"
    return (
        f"(ended_at < {q.param(at)} OR (ended_at = {q.param(at)} AND id < {q.param(tid)}) OR ended_at IS NULL)"
    )


def fingerprint(tenant: str, order: TaskOrder, flt: TaskFilter) -> str:
    """What a cursor is bound to: the tenant, the order and the filter."""
    raw = json.dumps([tenant, order.value, asdict(flt)], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


NOT_YOURS = "after: this cursor was not given for this order and filter; start again without it."


def encode_cursor(bound: str, at: datetime | None, tid: uuid.UUID) -> str:
    raw = json.dumps([bound, at.isoformat() if at is not None else None, str(tid)])
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str, bound: str) -> tuple[datetime | None, uuid.UUID]:
    try:
        made_for, at, tid = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        position = (datetime.fromisoformat(at) if at is not None else None), uuid.UUID(tid)
    except (ValueError, TypeError) as exc:
        raise BadInput(NOT_YOURS, field="after") from exc
    if made_for != bound:
        raise BadInput(NOT_YOURS, field="after")
    return position


async def list_tasks(
    access: Access,
    flt: TaskFilter,
    first: int,
    after: str | None,
    order: TaskOrder = TaskOrder.STARTED_AT_DESC,
    counted: bool = False,
) -> TaskPage:
    """A page of tasks and how to count them all. When the count is `counted` for sure, it is read beside
    the page, on a connection of its own where the database has more than one."""
    check(flt, first)
    await refuse_unreadable_filters(access, flt)
    caller = await access.list_scope()
    bound = fingerprint(access.tenant or "", order, flt)
    position = decode_cursor(after, bound) if after is not None else None

    def cursor(row: TaskRow) -> str:
        return encode_cursor(bound, _key(order, row), row.id)

    if caller is None:
        return TaskPage([], False, cursor, _zero)

    async def total() -> int:
        counting = ReadQuery()
        if counting.postgres and _search_of_all(caller, flt):
            sql = search.count_all(counting, caller.tenant, flt.search, str(ledger_id(caller.tenant)))
        else:
            sql = f"SELECT COUNT(*) FROM agent_task WHERE {conditions(counting, caller, flt)}"
        [(n,)] = await counting.rows(sql)
        return int(n)

    q = ReadQuery()
    where = conditions(q, caller, flt, paged=True)
    if position is not None:
        where += f" AND {_past(q, order, *position)}"
    count = asyncio.ensure_future(total()) if counted else None
    try:
        rows = await read_tasks(q, where, f"{ORDER_SQL[order]} LIMIT {q.param(first + 1)}")
    except BaseException:
        if count is not None:
            count.cancel()
        raise
    return TaskPage(rows[:first], len(rows) > first, cursor, total if count is None else lambda: count)


def _search_of_all(caller: ListScope, flt: TaskFilter) -> bool:
    """A search and nothing else, by a caller who reads words and sentences on every task of the tenant."""
    alone = flt.search is not None and flt == TaskFilter(search=flt.search)
    return alone and caller.asker is None and caller.words == "all"


async def _zero() -> int:
    return 0


def plain_filter(values: dict[str, Any]) -> TaskFilter:
    return TaskFilter(**{k: v for k, v in values.items() if v is not None})
