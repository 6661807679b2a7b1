"""Walking a tree's whole chain, in bounded memory, with the pure checker.

The lines are read in batches of plain rows on the connection, not as model instances: a chain can be
millions of lines long, and the checker needs only the values.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from tortoise.connection import get_connection

from models import AgentTask, TraceEvent
from models.record.chain import Line
from models.record.check import ChainChecker, TraceCheck
from models.line_columns import CHECKED, MARKED
from resolvers.read.snapshot import read_snapshot
from resolvers import metrics

BATCH = 5000
COLUMNS = CHECKED
SELECT = ", ".join(f'"{c}"' for c in COLUMNS)
PAGE = {
    "postgres": f'SELECT {SELECT} FROM "trace_event" WHERE "tenant" = $1 AND "root_id" = $2 AND "seq" > $3 ORDER BY "seq" LIMIT $4',
    "sqlite": f'SELECT {SELECT} FROM "trace_event" WHERE "tenant" = ? AND "root_id" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?',
}
SEQ, TASK = COLUMNS.index("seq"), COLUMNS.index("task_id")
MARK_AT = tuple(COLUMNS.index(column) for column in MARKED)
SQLITE_TYPED = tuple(
    (i, TraceEvent._meta.fields_map[column].to_python_value)
    for i, column in enumerate(COLUMNS)
    if column not in MARKED and TraceEvent._meta.fields_map[column].field_type in (datetime, bool)
)


def line_from_row(row: Sequence[Any]) -> Line:
    """A row as the driver gives it on PostgreSQL: uuids, aware datetimes and booleans already."""
    values = list(row)
    values[TASK] = str(values[TASK])
    for i in MARK_AT:
        values[i] = values[i] is not None
    return Line(*values)


def sqlite_line_from_row(row: Sequence[Any]) -> Line:
    """A row as SQLite gives it, its times and flags read back the way the model reads them."""
    values = list(row)
    for i, convert in SQLITE_TYPED:
        values[i] = convert(values[i])
    values[TASK] = str(values[TASK]).lower()
    for i in MARK_AT:
        values[i] = values[i] is not None
    return Line(*values)


READERS: dict[str, Callable[[Sequence[Any]], Line]] = {"postgres": line_from_row, "sqlite": sqlite_line_from_row}


async def verify_tree(root: AgentTask, conn: Any = None) -> TraceCheck:
    """Checks the tree's chain against `root`'s head; both must come from one snapshot (see `verify_task`)."""
    conn = conn or get_connection("default")
    dialect = conn.capabilities.dialect
    page, read = PAGE[dialect], READERS[dialect]
    checker = ChainChecker(str(root.id))
    feed, after, root_id = checker.feed, 0, str(root.id)
    while True:
        _, rows = await conn.execute_query(page, [root.tenant, root_id, after, BATCH])
        for row in rows:
            feed(read(row))
        if len(rows) < BATCH:
            break
        after = rows[-1][SEQ]
    check = checker.finish(root.chain_length, root.chain_head)
    if not check.intact:
        metrics.verify_failed()
    return check


async def verify_task(task_id: uuid.UUID, tenant: str | None = None) -> TraceCheck | None:
    """The check of the task's tree, its head and its lines read from one snapshot. Without `tenant` (the
    operator's command line) the task is looked up in every tenant."""
    async with read_snapshot() as conn:
        task = await AgentTask.filter(id=task_id, **({"tenant": tenant} if tenant else {})).using_db(conn).first()
        if task is None:
            return None
        root = task if task.id == task.root_id else await AgentTask.get(id=task.root_id, tenant=task.tenant,
                                                                       using_db=conn)
        return await verify_tree(root, conn)
