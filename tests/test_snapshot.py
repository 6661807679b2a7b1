"""Reads inside `read_snapshot()` see the database as it was at the first of them."""

import sqlite3
import uuid

import asyncpg

from models import TraceEvent
from resolvers.read.snapshot import read_snapshot
from tests.shop import Shop


async def delete_elsewhere(database: str, task: str, seq: int) -> None:
    """Deletes a line on a connection of its own, committed at once."""
    if database.startswith("postgres"):
        conn = await asyncpg.connect(database)
        try:
            await conn.execute("DELETE FROM trace_event WHERE task_id = $1 AND seq = $2", uuid.UUID(task), seq)
        finally:
            await conn.close()
        return
    conn = sqlite3.connect(database.removeprefix("sqlite://"))
    try:
        with conn:
            conn.execute("DELETE FROM trace_event WHERE task_id = ? AND seq = ?", (task, seq))
    finally:
        conn.close()


async def test_a_line_removed_by_another_connection_is_still_there_inside_the_snapshot(client, database):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    async with read_snapshot():
        before = await TraceEvent.filter(task_id=task).count()
        await delete_elsewhere(database, task, 9)
        inside = await TraceEvent.filter(task_id=task).values_list("seq", flat=True)

    assert before == len(inside) == 9
    assert await TraceEvent.filter(task_id=task).count() == 8
    assert (await shop.verify(task))["brokenAt"] == 9
