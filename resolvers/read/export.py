"""A tree's record as JSON Lines (agentlog-export/v1): a header, then every line of the chain in seq order.

The lines are read page by page from one consistent snapshot of the database, so an export is one state of the
chain, its head and its checkpoint, in memory that does not grow with the chain. What a caller may not read is
left out line by line: sentence and salt, content and salt; the hashes are always there. A line of a task the
caller may not see at all keeps only its seq and hashes, enough to carry the chain across it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache
from typing import Any

import orjson
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from models import AgentTask, TraceEvent
from models.record.chain import UTC_OFFSET, rfc3339
from permissions.access import EVERYTHING, Access, Group
from resolvers.read import verify
from resolvers.read.rows_seen import task_row

FORMAT = "agentlog-export/v1"
MEDIA_TYPE = "application/jsonl"
SLICE = 1000
ROOT = {
    "postgres": 'SELECT "tenant", "chain_length", "chain_head" FROM "agent_task" WHERE "tenant" = $1 AND "id" = $2',
    "sqlite": 'SELECT "tenant", "chain_length", "chain_head" FROM "agent_task" WHERE "tenant" = ? AND "id" = ?',
}
NOTE = {
    "postgres": 'SELECT "note" FROM "checkpoint" WHERE "tenant" = $1 AND "root_id" = $2',
    "sqlite": 'SELECT "note" FROM "checkpoint" WHERE "tenant" = ? AND "root_id" = ?',
}

Fetch = Callable[[str, list[Any]], Any]
Groups = frozenset | dict[str, frozenset]
NOTHING: frozenset = frozenset()
UTC = timezone.utc
_dumps = orjson.dumps


@asynccontextmanager
async def snapshot() -> AsyncIterator[tuple[str, Fetch]]:
    """One consistent read of the database for as long as it is held: a read-only REPEATABLE READ transaction
    on PostgreSQL, one read transaction on SQLite. Yields the dialect and `fetch(sql, params) -> rows`."""
    conn = get_connection("default")
    dialect = conn.capabilities.dialect
    if dialect == "postgres":
        async with conn.acquire_connection() as raw:
            async with raw.transaction(isolation="repeatable_read", readonly=True):
                yield dialect, lambda sql, params: raw.fetch(sql, *params)
        return
    async with in_transaction() as tx:
        async def fetch(sql: str, params: list[Any]) -> Sequence[Any]:
            return (await tx.execute_query(sql, params))[1]

        yield dialect, fetch


def _time(value: Any) -> Any:
    """A time as the chain writes it; orjson writes an aware UTC time with a fraction the same way, faster."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        value = TraceEvent._meta.fields_map["at"].to_python_value(value)
    return value if value.microsecond and value.utcoffset() == UTC_OFFSET else rfc3339(value)


def line_json(v: Sequence[Any], groups: frozenset) -> bytes:
    """One line from its values in `verify.COLUMNS` order, as the caller may read it."""
    return line_writer(groups)(v)


def _hashes(v: Sequence[Any]) -> bytes:
    return _dumps({"seq": v[0], "summaryHash": v[8], "payloadHash": v[9], "prevHash": v[10], "hash": v[11]})


@cache
def line_writer(groups: frozenset) -> Callable[[Sequence[Any]], bytes]:
    """How a line is written for a caller reading `groups`, worked out once per set of groups: an enum member
    hashes in Python, and an export asks this of every line."""
    if Group.FIGURES not in groups:
        return _hashes
    sentences, content = Group.SENTENCES in groups, Group.CONTENT in groups

    def write(v: Sequence[Any]) -> bytes:
        at, erased, content_erased = v[3], v[22], v[23]
        return _dumps({
            "seq": v[0], "kind": v[1], "task": v[2], "at": at if at.__class__ is datetime and at.tzinfo is UTC
            and at.microsecond else _time(at), "model": v[12], "routeRule": v[13],
            "attempts": v[14], "costMicros": v[15], "inputTokens": v[16], "outputTokens": v[17], "tool": v[18],
            "toolCallId": v[19], "isError": v[20], "durationMs": v[21],
            "summary": v[4] if sentences else None, "summarySalt": v[6] if sentences else None,
            "payload": v[5] if content else None, "payloadSalt": v[7] if content else None,
            "summaryHash": v[8], "payloadHash": v[9], "prevHash": v[10], "hash": v[11],
            "erasedAt": None if erased is None else _time(erased),
            "contentErasedAt": None if content_erased is None else _time(content_erased),
        }, default=str, option=orjson.OPT_UTC_Z)

    return write


def sqlite_values(row: Sequence[Any]) -> tuple:
    """A SQLite row's values as PostgreSQL's driver gives them, read the way `verify` reads them."""
    line = verify.sqlite_line_from_row(row)
    return (line.seq, line.kind, line.task, line.at, *row[4:20], line.is_error, row[21], row[22], row[23])


async def stream(tenant: str, root_id: uuid.UUID, groups: Groups) -> AsyncIterator[bytes]:
    """The export of one tree, a page of lines at a time; nothing when the tree is gone. `groups` are what the
    caller reads on every task, or on each task by its id."""
    async with snapshot() as (dialect, fetch):
        found = await fetch(ROOT[dialect], [tenant, str(root_id)])
        if not found:
            return
        length, head = found[0][1], found[0][2]
        note = await fetch(NOTE[dialect], [tenant, str(root_id)])
        yield orjson.dumps({
            "format": FORMAT, "root": str(root_id), "tenant": tenant, "chainLength": length, "chainHead": head,
            "checkpoint": note[0][0] if note else None,
            "exportedAt": rfc3339(datetime.now(timezone.utc)),
        }) + b"\n"
        async for rows in pages(fetch, verify.PAGE[dialect], tenant, str(root_id)):
            if dialect == "sqlite":
                rows = [sqlite_values(row) for row in rows]
            for start in range(0, len(rows), SLICE):
                part = rows[start:start + SLICE]
                if isinstance(groups, frozenset):
                    out = list(map(line_writer(groups), part))
                else:
                    out = [line_json(row, groups.get(str(row[2]), NOTHING)) for row in part]
                out.append(b"")
                yield b"\n".join(out)
                await asyncio.sleep(0)


async def pages(fetch: Fetch, page: str, tenant: str, root_id: str) -> AsyncIterator[Sequence[Any]]:
    """The chain's rows a page at a time, the next page read while the caller works on this one."""
    pending = asyncio.ensure_future(fetch(page, [tenant, root_id, 0, verify.BATCH]))
    try:
        while pending is not None:
            rows = await pending
            pending = None
            if len(rows) == verify.BATCH:
                pending = asyncio.ensure_future(fetch(page, [tenant, root_id, rows[-1][0], verify.BATCH]))
            yield rows
    finally:
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)


@dataclass(frozen=True)
class Export:
    tenant: str
    root_id: uuid.UUID
    groups: Groups

    def lines(self) -> AsyncIterator[bytes]:
        return stream(self.tenant, self.root_id, self.groups)


async def export_for(access: Access, task_id: str) -> Export | None:
    """The export of the task's tree as the caller may read it; None when the task does not exist for them."""
    row = await task_row(access, task_id)
    if row is None:
        return None
    tasks = await AgentTask.filter(tenant=row.tenant, root_id=row.root_id).only("id", "tenant", "path", "requester_id")
    found = await access.task_groups(tasks)
    kinds = set(found.values())
    if len(kinds) == 1:
        return Export(row.tenant, row.root_id, kinds.pop())
    return Export(row.tenant, row.root_id, {str(task_id): groups for task_id, groups in found.items()})


async def export_all(task_id: uuid.UUID) -> Export | None:
    """The export of the task's tree with everything in it, for the operator's command line."""
    row = await AgentTask.filter(id=task_id).only("id", "tenant", "root_id").first()
    if row is None:
        return None
    return Export(row.tenant, row.root_id, EVERYTHING)
