"""Walking a tree's whole chain, in bounded memory, with the pure checker.

The lines are read in batches of plain rows on the connection, not as model instances: a chain can be
millions of lines long, and the checker needs only the values.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from tortoise.connection import get_connection

from models import AgentTask, TraceEvent
from models.chain import ChainChecker, Line, TraceCheck
from resolvers import metrics

BATCH = 5000
COLUMNS = (
    "seq", "kind", "task_id", "at", "summary", "payload", "summary_salt", "payload_salt", "summary_hash",
    "payload_hash", "prev_hash", "hash", "model", "route_rule", "attempts", "cost_micros", "input_tokens",
    "output_tokens", "tool", "tool_call_id", "is_error", "duration_ms", "erased_at", "content_erased_at",
)
SELECT = ", ".join(f'"{c}"' for c in COLUMNS)
PAGE = {
    "postgres": f'SELECT {SELECT} FROM "trace_event" WHERE "root_id" = $1 AND "seq" > $2 ORDER BY "seq" LIMIT $3',
    "sqlite": f'SELECT {SELECT} FROM "trace_event" WHERE "root_id" = ? AND "seq" > ? ORDER BY "seq" LIMIT ?',
}


def line_from_row(row: Sequence[Any]) -> Line:
    """A row as the driver gives it on PostgreSQL: uuids, aware datetimes and booleans already."""
    return Line(
        row[0], row[1], str(row[2]), row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10], row[11],
        row[12], row[13], row[14], row[15], row[16], row[17], row[18], row[19], row[20], row[21],
        row[22] is not None, row[23] is not None,
    )


def sqlite_line_from_row(row: Sequence[Any]) -> Line:
    """A row as SQLite gives it, its time and flag read back the way the model reads them."""
    at = TraceEvent._meta.fields_map["at"].to_python_value(row[3])
    is_error = None if row[20] is None else bool(row[20])
    return Line(
        row[0], row[1], str(row[2]).lower(), at, row[4], row[5], row[6], row[7], row[8], row[9], row[10], row[11],
        row[12], row[13], row[14], row[15], row[16], row[17], row[18], row[19], is_error, row[21],
        row[22] is not None, row[23] is not None,
    )


READERS: dict[str, Callable[[Sequence[Any]], Line]] = {"postgres": line_from_row, "sqlite": sqlite_line_from_row}


async def verify_tree(root: AgentTask) -> TraceCheck:
    conn = get_connection("default")
    dialect = conn.capabilities.dialect
    page, read = PAGE[dialect], READERS[dialect]
    checker = ChainChecker()
    feed, after, root_id = checker.feed, 0, str(root.id)
    while True:
        _, rows = await conn.execute_query(page, [root_id, after, BATCH])
        for row in rows:
            feed(read(row))
        if len(rows) < BATCH:
            break
        after = rows[-1][0]
    check = checker.finish(root.chain_length, root.chain_head)
    if not check.intact:
        metrics.verify_failed()
    return check


async def verify_task(task_id: uuid.UUID) -> TraceCheck | None:
    task = await AgentTask.filter(id=task_id).first()
    if task is None:
        return None
    root = task if task.id == task.root_id else await AgentTask.get(id=task.root_id)
    return await verify_tree(root)
