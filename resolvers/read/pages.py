"""Pages of the lists below a task, each read for many tasks at once in one statement.

A page of one key is an ordered read with a LIMIT. A page of many keys (a whole level of a tree asking
`children(first: 10)`) ranks each key's rows with ROW_NUMBER() and keeps the first of each, so a nested
paged read stays one statement per level, whatever the tree's size.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from models import LlmCall, settings
from models.errors import BadInput
from resolvers.read.rows import ReadQuery, TaskRow, read_lines, read_tasks
from resolvers.read.tree import Cover, _under, prefixes_of

MAX_FIRST = 5000


@dataclass(frozen=True, slots=True)
class Page:
    """`first` rows after `after` (a seq, a sequence number or a call's (at, id)); without `first`, up to the cap."""

    first: int | None = None
    after: Any = None

    @property
    def limit(self) -> int:
        return self.first if self.first is not None else settings.max_list_rows() + 1


def page(field: str, first: int | None, after: Any = None) -> Page:
    if first is not None and not 1 <= first <= MAX_FIRST:
        raise BadInput(f"{field}: first is 1 to {MAX_FIRST}, not {first}.", field="first")
    return Page(first, after)


def seq_page(field: str, first: int | None, after: int | None) -> Page:
    if after is not None and after < 0:
        raise BadInput(f"{field}: after is a seq, 0 or more, not {after}.", field="after")
    return page(field, first, after)


def capped(field: str, rows: Sequence[Any], at: Page) -> Sequence[Any]:
    """The rows of a page; without `first`, refused past AGENTLOG_MAX_LIST_ROWS rather than cut."""
    cap = settings.max_list_rows()
    if at.first is None and len(rows) > cap:
        raise BadInput(f"{field}: more than {cap} rows; ask for them in pages with first and after.", field="first")
    return rows


def ranked(q: ReadQuery, table: str, tenant: str, where: str, partition: str, order: str, limit: int) -> str:
    """The condition keeping the first `limit` rows of each `partition` in `order`, among those `where` keeps
    of the tenant's."""
    ranking = (
        f"id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY {partition} ORDER BY {order}) AS n "
        f"FROM {table} WHERE {where}) ranked WHERE n <= {q.param(limit)})"
    )
    return f"{ranking} AND tenant = {q.param(tenant)}"


def _one_of(q: ReadQuery, column: str, values: Sequence[Any]) -> str:
    """An equality for one key, so the planner walks the (key, order) index and stops at the LIMIT."""
    return f"{column} = {q.param(values[0])}" if len(values) == 1 else q.one_of(column, values)


def _limited(
    q: ReadQuery, table: str, tenant: str, where: str, partition: str, order: str, keys: int, at: Page
) -> tuple[str, str]:
    """(where, order) for a page of each key: a LIMIT for one key, a ranking for many."""
    if keys == 1:
        return where, f"{order} LIMIT {q.param(at.limit)}"
    return ranked(q, table, tenant, where, partition, order, at.limit), order


Found = TypeVar("Found")


async def _each_page(
    read: Callable[[ReadQuery, str, str], Awaitable[Found]],
    size: Callable[[Found], int],
    where_of: Callable[[ReadQuery], str],
    table: str,
    tenant: str,
    partition: str,
    order: str,
    keys: int,
    at: Page,
) -> Found:
    """Each key's page, read by `read(statement, where, order)`.

    Without `first`, many keys are read first as one plain range cut at the cap and one more: when all their
    rows together are within the cap, no key's are past it, and that read is the answer. Ranking every key's
    rows (a window over all of them) is left for reads past the cap, which then bring at most the cap and one
    more of each key, as before."""
    if at.first is None and keys > 1:
        q = ReadQuery()
        found = await read(q, where_of(q), f"{order} LIMIT {q.param(at.limit)}")
        if size(found) < at.limit:
            return found
    q = ReadQuery()
    where, ordered = _limited(q, table, tenant, where_of(q), partition, order, keys, at)
    return await read(q, where, ordered)


async def children_page(tenant: str, parent_ids: Sequence[uuid.UUID], at: Page) -> dict[uuid.UUID, list[TaskRow]]:
    """A page of each task's children in sequence order; `at.after` is a sequence number."""

    def where_of(q: ReadQuery) -> str:
        where = f"tenant = {q.param(tenant)} AND {_one_of(q, 'parent_id', parent_ids)}"
        return where if at.after is None else f"{where} AND sequence > {q.param(at.after)}"

    rows = await _each_page(
        read_tasks, len, where_of, "agent_task", tenant, "parent_id", "sequence", len(parent_ids), at
    )
    out: dict[uuid.UUID, list[TaskRow]] = defaultdict(list)
    for row in rows:
        out[row.parent_id].append(row)
    return out


def _lines(key: str, columns: Iterable[str]) -> Callable[[ReadQuery, str, str], Awaitable[dict[Any, list[Any]]]]:
    async def read(q: ReadQuery, where: str, order: str) -> dict[Any, list[Any]]:
        return await read_lines(q, key, columns, where, order)

    return read


def _count(found: dict[Any, list[Any]]) -> int:
    return sum(map(len, found.values()))


async def lines_page(
    tenant: str, task_ids: Sequence[uuid.UUID], columns: Iterable[str], at: Page
) -> dict[uuid.UUID, list[Any]]:
    """A page of each task's own lines in seq order; `at.after` is a seq."""

    def where_of(q: ReadQuery) -> str:
        where = f"tenant = {q.param(tenant)} AND {_one_of(q, 'task_id', task_ids)}"
        return where if at.after is None else f"{where} AND seq > {q.param(at.after)}"

    read = _lines("task_id", columns)
    return await _each_page(read, _count, where_of, "trace_event", tenant, "task_id", "seq", len(task_ids), at)


RecordKey = tuple[uuid.UUID, frozenset[uuid.UUID] | None]
"""A tree's root, and the tasks of it whose lines the caller reads (None: all of them)."""


async def record_page(tenant: str, keys: Sequence[RecordKey], columns: Iterable[str], at: Page) -> dict[RecordKey, list[Any]]:
    """A page of each tree's chain in seq order, holding only the lines of the tasks each key names."""
    q = ReadQuery()
    where = f"tenant = {q.param(tenant)}"
    whole = [root for root, tasks in keys if tasks is None]
    some = [(root, tasks) for root, tasks in keys if tasks is not None]
    terms = [_one_of(q, "root_id", whole)] if whole else []
    if some:
        tasks = {task for _, only in some for task in only}
        terms.append(f"({q.one_of('root_id', [root for root, _ in some])} AND {q.one_of('task_id', tasks)})")
    where += f" AND ({' OR '.join(terms) or '1 = 0'})"
    if at.after is not None:
        where += f" AND seq > {q.param(at.after)}"
    where, order = _limited(q, "trace_event", tenant, where, "root_id", "seq", len(keys), at)
    found = await read_lines(q, "root_id", {*columns, "task_id"}, where, order)
    return {key: found.get(key[0], []) for key in keys}


async def calls_page(tenant: str, task_ids: Sequence[uuid.UUID], at: Page) -> dict[uuid.UUID, list[LlmCall]]:
    """A page of each task's meter rows in (at, id) order; `at.after` is the id of the last row seen."""
    q = ReadQuery()
    where = f"tenant = {q.param(tenant)} AND {_one_of(q, 'task_id', task_ids)}"
    if at.after is not None:
        def last_at() -> str:
            return f"(SELECT at FROM llm_call WHERE tenant = {q.param(tenant)} AND id = {q.param(at.after)})"

        where += f" AND (at > {last_at()} OR (at = {last_at()} AND id > {q.param(at.after)}))"
    where, order = _limited(q, "llm_call", tenant, where, "task_id", "at, id", len(task_ids), at)
    ids = [row[0] for row in await q.rows(f"SELECT id FROM llm_call WHERE {where} ORDER BY {order}")]
    out: dict[uuid.UUID, list[LlmCall]] = defaultdict(list)
    if ids:
        for row in await LlmCall.filter(tenant=tenant, id__in=ids).order_by("at", "id"):
            out[row.task_id].append(row)
    return out


async def is_call_of(tenant: str, task_id: uuid.UUID, call_id: uuid.UUID) -> bool:
    return await LlmCall.filter(tenant=tenant, task_id=task_id, id=call_id).exists()


async def child_counts(tenant: str, parent_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    q = ReadQuery()
    sql = (
        f"SELECT parent_id, COUNT(*) FROM agent_task WHERE tenant = {q.param(tenant)} "
        f"AND {q.one_of('parent_id', parent_ids)} GROUP BY parent_id"
    )
    return {uuid.UUID(str(parent)): int(n) for parent, n in await q.rows(sql)}


async def subtree_counts(tenant: str, paths: Sequence[str]) -> dict[str, int]:
    """How many tasks lie under each path: one read of the paths under them all, counted here."""
    cover = Cover.of(paths)
    q = ReadQuery()
    wanted = set(paths)
    counts: dict[str, int] = dict.fromkeys(paths, 0)
    for (path,) in await q.rows(f"SELECT path FROM agent_task WHERE tenant = {q.param(tenant)} AND {_under(q, cover)}"):
        for prefix in prefixes_of(path):
            if prefix != path and prefix in wanted:
                counts[prefix] += 1
    return counts
