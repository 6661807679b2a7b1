"""The ingest baseline: the same trees' rows, hashed with hashlib and written with asyncpg executemany.

One process, one connection, one transaction per tree, the rows made from the same inputs the kits send.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import datetime, timezone
from operator import itemgetter
from typing import Any

import asyncpg

from bench.common import TENANT, raw_commit, raw_fixed, raw_line_hash
from bench.ingest import END, LINES_PER_TREE, START, TREES, Run, steps
from models.chain import GENESIS, compact_json
from models.line_columns import INSERTED
from resolvers import sentences

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


def insert(table: str, columns: tuple[str, ...]) -> str:
    marks = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


class Tree:
    """One tree's rows, each line hashed after the one before as it is made."""

    def __init__(self, task: uuid.UUID) -> None:
        self.task, self.head, self.turns = task, GENESIS, 0
        self.lines: list[tuple] = []
        self.calls: list[tuple] = []

    def line(self, kind: str, summary: str, payload: str | None, **given: Any) -> datetime:
        seq, at = len(self.lines) + 1, datetime.now(timezone.utc)
        f = [given.get(name) for name in FIGURES]
        salts = os.urandom(32).hex()
        summary_salt, payload_salt = salts[:32], salts[32:]
        summary_hash, payload_hash = raw_commit(summary_salt, summary), raw_commit(payload_salt, payload or "")
        model, route_rule, attempts, cost, _, tool, call_id, input_tokens, output_tokens, duration, is_error = f
        fixed = raw_fixed(seq, kind, self.task, at, model, route_rule, attempts, cost, input_tokens, output_tokens,
                          tool, call_id, is_error, duration)
        hash_ = raw_line_hash(self.head, fixed, summary_hash, payload_hash)
        self.lines.append(as_inserted((TENANT, self.task, seq, kind, self.task, at, summary, payload, None, *f, None,
                                       summary_salt, payload_salt, summary_hash, payload_hash, self.head, hash_)))
        self.head = hash_
        return at

    def step(self, line: dict[str, Any]) -> None:
        kind, f = next(iter(line.items()))
        if kind == "modelCall":
            call, self.turns = uuid.uuid4(), self.turns + 1
            content = {"systemPrompt": f["systemPrompt"], "messages": f["messages"], "response": f["response"]}
            at = self.line(
                "MODEL_CALL", sentences.model_call(f["model"], f["routeRule"], f["costMicros"], f["response"], None),
                compact_json(content), model=f["model"], route_rule=f["routeRule"], attempts=1,
                cost_micros=f["costMicros"], call_id=call, input_tokens=f["inputTokens"],
                output_tokens=f["outputTokens"], duration_ms=f["durationMs"],
            )
            self.calls.append((call, TENANT, self.task, str(self.task), self.turns, "Estimator", f["model"],
                               f["provider"], f["routeRule"], 1, f["inputTokens"], f["outputTokens"], f["costMicros"],
                               f["durationMs"], at, None))
        elif kind == "toolCall":
            self.line("TOOL_CALL", sentences.tool_call(f["tool"], False), compact_json(f["input"]), tool=f["tool"],
                      tool_call_id=f["toolCallId"])
        else:
            self.line("TOOL_RESULT", sentences.tool_result(f["tool"], False, f["durationMs"]),
                      compact_json(f["output"]), tool=f["tool"], tool_call_id=f["toolCallId"],
                      duration_ms=f["durationMs"], is_error=False)


async def write(conn: asyncpg.Connection, index: int) -> uuid.UUID:
    task = uuid.uuid4()
    tree = Tree(task)
    started = tree.line("STARTED", sentences.started("Estimator", "EstimateRepair", START["requester"], False),
                        START["given"])
    for line in steps(index):
        tree.step(line)
    result = compact_json(END["result"])
    ended = tree.line("ENDED", sentences.ended("DONE"), result)
    async with conn.transaction():
        await conn.execute(insert("agent_task", TASK_COLUMNS), task, TENANT, "Estimator", "EstimateRepair",
                           "REQUEST", START["about"], START["given"], "mia", "Mia", "estimator", "Estimator",
                           "RUNNING", started, task, 0, 1, str(task), 0, GENESIS)
        await conn.executemany(insert("trace_event", INSERTED), tree.lines)
        await conn.executemany(insert("llm_call", CALL_COLUMNS), tree.calls)
        await conn.execute(
            "UPDATE agent_task SET status = 'DONE', outcome = $2, result = $3, ended_at = $4, "
            "chain_length = $5, chain_head = $6 WHERE id = $1",
            task, END["outcome"], result, ended, len(tree.lines), tree.head,
        )
    return task


async def baseline(url: str) -> Run:
    conn = await asyncpg.connect(url)
    try:
        start = time.perf_counter()
        roots = [str(await write(conn, i)) for i in range(TREES)]
        return Run(TREES * LINES_PER_TREE, time.perf_counter() - start, roots)
    finally:
        await conn.close()
