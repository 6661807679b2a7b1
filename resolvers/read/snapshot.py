"""Reading a tree from one consistent snapshot, while writers go on appending to it.

A verifier reads the head and then the lines; between two statements outside a snapshot a writer can
append, and the lines would then run past the head they are checked against. Inside `read_snapshot()`
every statement on the default connection (the ORM's and the raw ones alike) sees the database as it
was at the first of them: a REPEATABLE READ, READ ONLY transaction on PostgreSQL; on SQLite, one read
transaction on a connection of its own, so the server's writers neither wait for it nor show through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tortoise.backends.sqlite.client import SqliteClient
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"


@asynccontextmanager
async def read_snapshot() -> AsyncIterator[Any]:
    """Yields the connection every read in the block goes through, all of them seeing one snapshot."""
    client = get_connection("default")
    if client.capabilities.dialect == "postgres":
        async with in_transaction() as conn:
            await conn.execute_script(SNAPSHOT)
            yield conn
        return
    if client.filename == ":memory:":
        async with in_transaction() as conn:
            yield conn
        return
    reader = SqliteClient(client.filename, connection_name=client.connection_name, **client.pragmas)
    await reader.create_connection(with_db=True)
    try:
        # tortoise-orm 1.1.9: SqliteClient._in_transaction, a transaction on this unregistered client.
        async with reader._in_transaction() as conn:
            yield conn
    finally:
        await reader.close()
