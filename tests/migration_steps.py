"""Run as `python -m tests.migration_steps URL`: on an empty database, migrates to 0011, stores OTLP spans as
that schema kept them (waiting with a body, placed without), migrates to 0012 (and tries to store a waiting span
twice), then to the latest, then back to 0011; prints what each schema holds as JSON. A process of its own, so
the test's own database stays open in tortoise."""

from __future__ import annotations

import asyncio
import json
import sys

from tortoise import Tortoise
from tortoise.connection import get_connection
from tortoise.exceptions import IntegrityError
from tortoise.migrations.executor import MigrationExecutor, MigrationTarget

from models import db

TASK = "8d9f2f3e-5a7b-4c1d-9e0f-1a2b3c4d5e6f"
ROWS = [
    ("shop", "t1", "a1", None, "agent", None, 1, True, TASK),
    ("shop", "t1", "c1", "a1", "llm", None, 2, True, None),
    ("shop", "t1", "p1", "a1", "tool", '{"fields":{"tool":"PartsFor"}}', 3, True, None),
    ("shop", "t1", "w1", "gone", "llm", '{"name":"chat","fields":{}}', 4, False, None),
    ("shop", "t2", "f1", None, "other", None, 5, True, None),
]
INSERT = ('INSERT INTO otlp_span (tenant, trace_id, span_id, parent_span_id, kind, body, received_us, placed, task_id) '
          'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)')


async def to(name: str | None) -> None:
    executor = MigrationExecutor(get_connection("default"), db.tortoise_config("")["apps"])
    await executor.migrate([MigrationTarget(db.APP, name)] if name else None)


async def rows(sql: str) -> list[dict]:
    return [dict(row) for row in await get_connection("default").execute_query_dict(sql)]


async def refused(sql: str) -> bool:
    try:
        await get_connection("default").execute_query(sql)
    except IntegrityError:
        return True
    return False


async def main(url: str) -> None:
    await Tortoise.init(config=db.tortoise_config(url))
    try:
        await to("0011_task_words_table")
        conn = get_connection("default")
        await conn.execute_many(db.placeholders(conn, INSERT), [list(row) for row in ROWS])
        await to("0012_otlp_placed")
        after = {
            "placed": await rows('SELECT tenant, trace_id, spans FROM otlp_placed ORDER BY trace_id'),
            "waiting": await rows('SELECT tenant, trace_id, span_id, parent_span_id, kind, body, received_us '
                                  'FROM otlp_span'),
        }
        after["duplicate_refused"] = await refused(
            'INSERT INTO otlp_span (tenant, trace_id, span_id, kind, body, received_us) '
            "VALUES ('shop', 't1', 'w1', 'llm', '{}', 5)")
        await to(None)
        after["by_id"] = await rows('SELECT tenant, trace_id, span_id, parent_span_id, kind, task_id, tool '
                                    'FROM otlp_placed_span ORDER BY span_id')
        await to("0011_task_words_table")
        back = await rows('SELECT span_id, body, placed, task_id FROM otlp_span ORDER BY span_id')
    finally:
        await Tortoise.close_connections()
    for row in after["placed"]:
        row["spans"] = json.loads(row["spans"])
    for row in after["by_id"]:
        row["task_id"] = row["task_id"] and str(row["task_id"])
    for row in back:
        row["placed"], row["task_id"] = bool(row["placed"]), row["task_id"] and str(row["task_id"])
    print(json.dumps({**after, "back": back}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
