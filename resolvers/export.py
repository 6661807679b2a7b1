"""A tree's record as JSON Lines (agentlog-export/v1): a header, then every line of the chain in seq order.

The lines are read page by page from one consistent snapshot of the database, so an export is one state of the
chain, its head and its checkpoint, in memory that does not grow with the chain. What a caller may not read is
left out line by line: sentence and salt, content and salt; the hashes are always there. A line of a task the
caller may not see at all keeps only its seq and hashes, enough to carry the chain across it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import orjson
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from models import AgentTask, TraceEvent
from models.chain import Line, rfc3339
from permissions.access import Access
from permissions.table import Group
from resolvers import verify
from resolvers.reads import task_row

FORMAT = "agentlog-export/v1"
MEDIA_TYPE = "application/jsonl"
EVERYTHING = frozenset({Group.FIGURES, Group.SENTENCES, Group.CONTENT})
ERASED_AT, CONTENT_ERASED_AT = verify.COLUMNS.index("erased_at"), verify.COLUMNS.index("content_erased_at")
ROOT = {
    "postgres": 'SELECT "tenant", "chain_length", "chain_head" FROM "agent_task" WHERE "id" = $1',
    "sqlite": 'SELECT "tenant", "chain_length", "chain_head" FROM "agent_task" WHERE "id" = ?',
}
NOTE = {
    "postgres": 'SELECT "note" FROM "checkpoint" WHERE "root_id" = $1',
    "sqlite": 'SELECT "note" FROM "checkpoint" WHERE "root_id" = ?',
}

Fetch = Callable[[str, list[Any]], Any]
Groups = Callable[[str], frozenset]


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


def _time(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        value = TraceEvent._meta.fields_map["at"].to_python_value(value)
    return rfc3339(value)


def line_json(line: Line, row: Sequence[Any], groups: frozenset) -> bytes:
    if Group.FIGURES not in groups:
        return orjson.dumps({
            "seq": line.seq, "summaryHash": line.summary_hash, "payloadHash": line.payload_hash,
            "prevHash": line.prev_hash, "hash": line.hash,
        })
    sentences, content = Group.SENTENCES in groups, Group.CONTENT in groups
    return orjson.dumps({
        "seq": line.seq, "kind": line.kind, "task": line.task, "at": rfc3339(line.at), "model": line.model,
        "routeRule": line.route_rule, "attempts": line.attempts, "costMicros": line.cost_micros,
        "inputTokens": line.input_tokens, "outputTokens": line.output_tokens, "tool": line.tool,
        "toolCallId": line.tool_call_id, "isError": line.is_error, "durationMs": line.duration_ms,
        "summary": line.summary if sentences else None,
        "summarySalt": line.summary_salt if sentences else None,
        "payload": line.payload if content else None,
        "payloadSalt": line.payload_salt if content else None,
        "summaryHash": line.summary_hash, "payloadHash": line.payload_hash, "prevHash": line.prev_hash,
        "hash": line.hash, "erasedAt": _time(row[ERASED_AT]), "contentErasedAt": _time(row[CONTENT_ERASED_AT]),
    })


async def stream(root_id: uuid.UUID, groups_of: Groups) -> AsyncIterator[bytes]:
    """The export of one tree, a page of lines at a time; nothing when the tree is gone."""
    async with snapshot() as (dialect, fetch):
        found = await fetch(ROOT[dialect], [str(root_id)])
        if not found:
            return
        tenant, length, head = found[0][0], found[0][1], found[0][2]
        note = await fetch(NOTE[dialect], [str(root_id)])
        yield orjson.dumps({
            "format": FORMAT, "root": str(root_id), "tenant": tenant, "chainLength": length, "chainHead": head,
            "checkpoint": note[0][0] if note else None,
            "exportedAt": rfc3339(datetime.now(timezone.utc)),
        }) + b"\n"
        page, read, after = verify.PAGE[dialect], verify.READERS[dialect], 0
        while True:
            rows = await fetch(page, [str(root_id), after, verify.BATCH])
            if rows:
                out = []
                for row in rows:
                    line = read(row)
                    out.append(line_json(line, row, groups_of(line.task)))
                out.append(b"")
                yield b"\n".join(out)
            if len(rows) < verify.BATCH:
                return
            after = rows[-1][0]


@dataclass(frozen=True)
class Export:
    root_id: uuid.UUID
    groups_of: Groups

    def lines(self) -> AsyncIterator[bytes]:
        return stream(self.root_id, self.groups_of)


async def export_for(access: Access, task_id: str) -> Export | None:
    """The export of the task's tree as the caller may read it; None when the task does not exist for them."""
    row = await task_row(access, task_id)
    if row is None:
        return None
    tasks = await AgentTask.filter(tenant=row.tenant, root_id=row.root_id).only("id", "tenant", "path", "requester_id")
    found = await access.task_groups(tasks)
    groups = {str(task_id): found[task_id] for task_id in found}
    return Export(row.root_id, lambda task: groups.get(task, frozenset()))


async def export_all(task_id: uuid.UUID) -> Export | None:
    """The export of the task's tree with everything in it, for the operator's command line."""
    row = await AgentTask.filter(id=task_id).only("id", "root_id").first()
    if row is None:
        return None
    return Export(row.root_id, lambda task: EVERYTHING)
