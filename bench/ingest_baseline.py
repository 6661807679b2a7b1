"""The ingest baseline: the same writes as the kits make, each its own transaction, from as many asyncpg
connections as there are kit clients.

A write here is what agentlog acknowledges: the tree's root row locked (`FOR UPDATE`), the lines sealed with
hashlib after the head read under that lock, stored (COPY from COPY_FROM rows on, an INSERT below, as
agentlog's write path does), the meter rows beside them, the head moved and signed in the tree's checkpoint,
and the commit; below COPY_FROM lines, the lines, meter rows, head and checkpoint go in one statement, as
agentlog sends them. The clients take trees from one shared queue as the kits do, so the trees interleave and
the locks are taken as often. Hashing happens in this one process, as the server's does in its one.

Its transactions (`start`, `append`, `end`) take the kit's inputs, so bench/ingest_raw.py serves the same ones
over HTTP.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from operator import itemgetter
from typing import Any

import asyncpg

from bench.common import TENANT, raw_commit, raw_fixed, raw_line_hash
from bench.ingest import BATCH, CLIENTS, END, LINES_PER_TREE, START, TREES, Run, steps
from models.record.chain import GENESIS, compact_json
from models.line_columns import INSERTED
from resolvers.write import sentences
from resolvers.write.checkpoints import KEEP, note_for
from resolvers.write.one_statement import Statement, insert as insert_rows, together
from resolvers.write.append import COPY_FROM

FIGURES = (
    "model", "route_rule", "attempts", "cost_micros", "call_id", "tool", "tool_call_id", "input_tokens",
    "output_tokens", "duration_ms", "is_error",
)
MADE = (
    "tenant", "root_id", "seq", "kind", "task_id", "at", "summary", "payload", "withheld", *FIGURES, "by_tool",
    "summary_salt", "payload_salt", "summary_hash", "payload_hash", "prev_hash", "hash",
)
assert sorted(MADE) == sorted(INSERTED), "a line here is made with other columns than agentlog stores"
as_inserted = itemgetter(*(MADE.index(column) for column in INSERTED))

CALL_COLUMNS = (
    "id", "tenant", "task_id", "task_path", "turn", "agent", "model", "provider", "route_rule", "attempts",
    "input_tokens", "output_tokens", "cost_micros", "duration_ms", "at", "by_tool",
)
TASK_COLUMNS = (
    "id", "tenant", "agent", "skill", "cause", "about", "given", "requester_id", "requester_name", "actor_id",
    "actor_name", "status", "started_at", "root_id", "depth", "sequence", "path", "chain_length", "chain_head",
)
LOCK = "SELECT chain_length, chain_head FROM agent_task WHERE id = $1 FOR UPDATE"
MOVE = "UPDATE agent_task SET chain_length = $2, chain_head = $3 WHERE id = $1"
END_TASK = ("UPDATE agent_task SET status = $2, outcome = $3, result = $4, ended_at = $5, chain_length = $6, "
            "chain_head = $7 WHERE id = $1")


def insert(table: str, columns: tuple[str, ...]) -> str:
    marks = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


@dataclass(slots=True)
class Draft:
    """A line as the kit sent it, not yet sealed: sealing needs the head read under the lock."""

    kind: str
    summary: str
    payload: str | None
    figures: list[Any]
    at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


def draft(kind: str, summary: str, payload: str | None, **given: Any) -> Draft:
    return Draft(kind, summary, payload, [given.get(name) for name in FIGURES])


def sealed(task: uuid.UUID, drafts: list[Draft], seq: int, head: str) -> tuple[list[tuple], int, str]:
    """The drafts as stored rows, each hashed after the one before from (`seq`, `head`); the new length and head."""
    rows = []
    for d in drafts:
        seq += 1
        salts = os.urandom(32).hex()
        summary_salt, payload_salt = salts[:32], salts[32:]
        summary_hash, payload_hash = raw_commit(summary_salt, d.summary), raw_commit(payload_salt, d.payload or "")
        model, route_rule, attempts, cost, _, tool, call_id, input_tokens, output_tokens, duration, is_error = d.figures
        fixed = raw_fixed(seq, d.kind, task, d.at, model, route_rule, attempts, cost, input_tokens, output_tokens,
                          tool, call_id, is_error, duration)
        hash_ = raw_line_hash(head, fixed, summary_hash, payload_hash)
        rows.append(as_inserted((TENANT, task, seq, d.kind, task, d.at, d.summary, d.payload, None, *d.figures, None,
                                 summary_salt, payload_salt, summary_hash, payload_hash, head, hash_)))
        head = hash_
    return rows, seq, head


def step_draft(line: dict[str, Any]) -> Draft:
    kind, f = next(iter(line.items()))
    if kind == "modelCall":
        content = {"systemPrompt": f["systemPrompt"], "messages": f["messages"], "response": f["response"]}
        summary = sentences.model_call(f["model"], f["routeRule"], f["costMicros"], f["response"], None)
        return draft("MODEL_CALL", summary, compact_json(content), model=f["model"], route_rule=f["routeRule"],
                     attempts=1, cost_micros=f["costMicros"], call_id=uuid.uuid4(), input_tokens=f["inputTokens"],
                     output_tokens=f["outputTokens"], duration_ms=f["durationMs"])
    if kind == "toolCall":
        return draft("TOOL_CALL", sentences.tool_call(f["tool"], False), compact_json(f["input"]), tool=f["tool"],
                     tool_call_id=f["toolCallId"])
    return draft("TOOL_RESULT", sentences.tool_result(f["tool"], False, f["durationMs"]), compact_json(f["output"]),
                 tool=f["tool"], tool_call_id=f["toolCallId"], duration_ms=f["durationMs"], is_error=False)


@dataclass
class Tree:
    lines: list[dict[str, Any]]
    task: uuid.UUID | None = None
    at: int = 0
    turns: int = 0
    ended: bool = False


async def store(conn: asyncpg.Connection, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    if len(rows) >= COPY_FROM:
        await conn.copy_records_to_table(table, records=rows, columns=columns)
    elif len(rows) == 1:
        await conn.execute(insert(table, columns), *rows[0])
    elif rows:
        await conn.executemany(insert(table, columns), rows)


async def sign(conn: asyncpg.Connection, task: uuid.UUID, length: int, head: str,
               before: list[Statement] | None = None) -> None:
    """The head signed and kept; given the writes `before` it, all of them in one statement with the signing."""
    keep = Statement(KEEP, [task, TENANT, length, head, note_for(TENANT, str(task), length, head)])
    statement = together(before or [], keep)
    if await conn.fetchval(statement.sql, *statement.args) is None:
        raise AssertionError(f"tree {task}: a checkpoint at least {length} lines long is already kept")


def at_once(table: str, columns: tuple[str, ...], rows: list[tuple]) -> list[Statement]:
    """Rows too few for COPY, as a write to send in the signing's statement."""
    return [insert_rows(table, columns, rows)] if rows else []


async def start(conn: asyncpg.Connection, given: dict[str, Any]) -> uuid.UUID:
    """A new tree from a startTask input: its root row and STARTED line, signed; its id."""
    task = uuid.uuid4()
    requester, actor = given["requester"], given["actor"]
    first = draft("STARTED", sentences.started(given["agent"], given["skill"], requester, False), given["given"])
    rows, length, head = sealed(task, [first], 0, GENESIS)
    async with conn.transaction():
        await conn.execute(insert("agent_task", TASK_COLUMNS), task, TENANT, given["agent"], given["skill"],
                           "REQUEST", given["about"], given["given"], requester["id"], requester["name"], actor["id"],
                           actor["name"], "RUNNING", first.at, task, 0, 1, str(task), length, head)
        await store(conn, "trace_event", INSERTED, rows)
        await sign(conn, task, length, head)
    return task


async def append(
    conn: asyncpg.Connection, task: uuid.UUID, lines: list[dict[str, Any]], turns: int
) -> tuple[int, int]:
    """The lines appended to the tree in one transaction, its model calls metered from turn `turns` + 1; the last
    line's seq and the last turn."""
    drafts = [step_draft(line) for line in lines]
    async with conn.transaction():
        length, head = await conn.fetchrow(LOCK, task)
        rows, length, head = sealed(task, drafts, length, head)
        calls = []
        for d in drafts:
            if d.kind == "MODEL_CALL":
                turns += 1
                model, route_rule, _, cost, call_id, *_, input_tokens, output_tokens, duration, _ = d.figures
                calls.append((call_id, TENANT, task, str(task), turns, "Estimator", model, "scripted",
                              route_rule, 1, input_tokens, output_tokens, cost, duration, d.at, None))
        if len(rows) >= COPY_FROM:
            await store(conn, "trace_event", INSERTED, rows)
            await store(conn, "llm_call", CALL_COLUMNS, calls)
            await conn.execute(MOVE, task, length, head)
            await sign(conn, task, length, head)
        else:
            writes = at_once("trace_event", INSERTED, rows) + at_once("llm_call", CALL_COLUMNS, calls)
            await sign(conn, task, length, head, [*writes, Statement(MOVE, [task, length, head])])
    return length, turns


async def end(conn: asyncpg.Connection, task: uuid.UUID, given: dict[str, Any]) -> None:
    """The ENDED line and the root row's ending, from an endTask input."""
    result = compact_json(given["result"])
    last = draft("ENDED", sentences.ended(given["status"]), result)
    async with conn.transaction():
        length, head = await conn.fetchrow(LOCK, task)
        rows, length, head = sealed(task, [last], length, head)
        ending = Statement(END_TASK, [task, given["status"], given["outcome"], result, last.at, length, head])
        await sign(conn, task, length, head, [*at_once("trace_event", INSERTED, rows), ending])


async def next_step(conn: asyncpg.Connection, tree: Tree, batch: int) -> None:
    if tree.task is None:
        tree.task = await start(conn, START)
    elif tree.at < len(tree.lines):
        chunk = tree.lines[tree.at:tree.at + batch]
        _, tree.turns = await append(conn, tree.task, chunk, tree.turns)
        tree.at += len(chunk)
    else:
        await end(conn, tree.task, END)
        tree.ended = True


async def baseline(url: str, batch: int = BATCH) -> Run:
    """Every tree written by CLIENTS connections, `batch` lines a transaction (1: a transaction per line). The
    connections are opened, and their types loaded by one tree written before the clock, outside the figure."""
    conns = [await asyncpg.connect(url) for _ in range(CLIENTS)]
    try:
        for conn in conns:
            warm = Tree(steps(0)[:3 * COPY_FROM + 1])
            for size in (1, 3 * COPY_FROM, 1, 1):
                await next_step(conn, warm, size)
        trees: asyncio.Queue[Tree | None] = asyncio.Queue()
        for i in range(TREES):
            trees.put_nowait(Tree(steps(i)))
        done: list[Tree] = []

        async def client(conn: asyncpg.Connection) -> None:
            while (tree := await trees.get()) is not None:
                await next_step(conn, tree, batch)
                if not tree.ended:
                    trees.put_nowait(tree)
                    continue
                done.append(tree)
                if len(done) == TREES:
                    for _ in conns:
                        trees.put_nowait(None)

        start_at = time.perf_counter()
        async with asyncio.TaskGroup() as group:
            for conn in conns:
                group.create_task(client(conn))
        seconds = time.perf_counter() - start_at
        return Run(TREES * LINES_PER_TREE, seconds, [str(t.task) for t in done])
    finally:
        await asyncio.gather(*(conn.close() for conn in conns))
