"""Verify: agentlog's verify_tree over a long chain, against an asyncpg fetch of the same columns plus hashlib.

The chain is written straight into the tables with COPY, each line sealed by models.record.chain. Peak memory is
measured in a fresh process, as the peak resident size above what it held before verifying:
`python -m bench.verify URL ROOT agentlog|baseline`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import asyncpg

from bench.common import TENANT, raw_commit, raw_fixed, raw_line_hash
from models.record.chain import GENESIS, Line, compact_json, seal
from models.line_columns import INSERTED, SEALED, inserted_row

CHAIN = 200_000
STREAMED = 1_000_000
CHUNK = 20_000
RUNS = 3
ROOT = Path(__file__).resolve().parent.parent

TASK_COLUMNS = (
    "id", "tenant", "agent", "skill", "cause", "actor_id", "status", "started_at", "root_id", "depth", "sequence",
    "path", "chain_length", "chain_head",
)
def lines(root: uuid.UUID, tasks: list[uuid.UUID], count: int) -> Iterator[Line]:
    """A long run of turns over a few tasks, each line as the kit would have sent it."""
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for n in range(count):
        seq, task, at = n + 1, tasks[(n // 300) % len(tasks)], start + timedelta(milliseconds=n)
        base = dict(seq=seq, task=str(task), at=at, summary_salt=None, payload_salt=None, summary_hash="",
                    payload_hash="", prev_hash="", hash="")
        if n % 3 == 0:
            yield Line(kind="MODEL_CALL", summary="Everyday (chosen by llm:default) asked for a tool; it cost $0.0002.",
                       payload=compact_json({"systemPrompt": "You estimate bicycle repairs.",
                                             "messages": [{"role": "user", "content": f"Ticket {n}: the brake."}],
                                             "response": {"toolCalls": [{"name": "PartsFor"}]}}),
                       model="Everyday", route_rule="llm:default", attempts=1, cost_micros=200, input_tokens=800,
                       output_tokens=60, duration_ms=900, **base)
        elif n % 3 == 1:
            yield Line(kind="TOOL_CALL", summary="It asked for PartsFor (reads data).",
                       payload=compact_json({"fault": "rear brake", "turn": n}), tool="PartsFor",
                       tool_call_id=f"c{n}", **base)
        else:
            yield Line(kind="TOOL_RESULT", summary="PartsFor answered in 12 ms.",
                       payload=compact_json(["brake pads", "cable"]), tool="PartsFor", tool_call_id=f"c{n - 1}",
                       is_error=False, duration_ms=12, **base)


async def build_chain(url: str, count: int) -> uuid.UUID:
    """A tree of ten tasks whose chain is `count` lines long, sealed line by line and copied in."""
    root = uuid.uuid4()
    tasks = [root] + [uuid.uuid4() for _ in range(9)]
    conn = await asyncpg.connect(url)
    try:
        head, chunk = GENESIS, []
        for line in lines(root, tasks, count):
            seal(line, head)
            head = line.hash
            chunk.append(inserted_row(TENANT, root, line))
            if len(chunk) == CHUNK:
                await conn.copy_records_to_table("trace_event", records=chunk, columns=INSERTED)
                chunk = []
        if chunk:
            await conn.copy_records_to_table("trace_event", records=chunk, columns=INSERTED)
        now = datetime.now(timezone.utc)
        await conn.copy_records_to_table("agent_task", columns=TASK_COLUMNS, records=[
            (task, TENANT, "Estimator", "EstimateRepair", "REQUEST", "estimator", "DONE", now, root,
             0 if task == root else 1, 1 if task == root else i, str(root) if task == root else f"{root}/{task}",
             count if task == root else 0, head if task == root else GENESIS)
            for i, task in enumerate(tasks)
        ])
        await conn.execute("ANALYZE trace_event")
    finally:
        await conn.close()
    return root


async def agentlog_verify(root_id: uuid.UUID) -> tuple[float, int]:
    """Seconds for agentlog's verify_tree on an open tortoise connection, and the lines it found intact."""
    from models import AgentTask
    from resolvers.read.verify import verify_tree

    root = await AgentTask.get(id=root_id)
    start = time.perf_counter()
    check = await verify_tree(root)
    seconds = time.perf_counter() - start
    if not check.intact:
        raise AssertionError(f"agentlog found the chain broken: {check}")
    return seconds, check.lines


async def baseline_verify(conn: asyncpg.Connection, root_id: uuid.UUID, batch: int = 5000) -> tuple[float, int]:
    """The same columns fetched with asyncpg in the same keyset batches, and the same bytes hashed with hashlib, on
    a connection opened before the clock (warm after its first run, as agentlog's pooled one is)."""
    query = (f"SELECT {', '.join(SEALED)} FROM trace_event WHERE root_id = $1 AND seq > $2 "
             "ORDER BY seq LIMIT $3")
    start = time.perf_counter()
    prev, after, count = GENESIS, 0, 0
    while True:
        rows = await conn.fetch(query, root_id, after, batch)
        for (seq, kind, task, at, summary, payload, summary_salt, payload_salt, summary_hash, payload_hash,
             prev_hash, hash_, model, route_rule, attempts, cost, input_tokens, output_tokens, tool, call_id,
             is_error, duration) in rows:
            fixed = raw_fixed(seq, kind, task, at, model, route_rule, attempts, cost, input_tokens, output_tokens,
                              tool, call_id, is_error, duration)
            if (seq != count + 1 or prev_hash != prev or raw_commit(summary_salt, summary) != summary_hash
                    or raw_commit(payload_salt, payload or "") != payload_hash
                    or raw_line_hash(prev_hash, fixed, summary_hash, payload_hash) != hash_):
                raise AssertionError(f"the baseline found line {seq} broken")
            prev, count = hash_, count + 1
        if len(rows) < batch:
            break
        after = rows[-1][0]
    return time.perf_counter() - start, count


async def timings(url: str, root_id: uuid.UUID, runs: int = RUNS) -> tuple[float, float]:
    """Median seconds of agentlog and of the baseline, run alternately after one warm-up of each."""
    ours, theirs = [], []
    conn = await asyncpg.connect(url)
    try:
        await agentlog_verify(root_id)
        await baseline_verify(conn, root_id)
        for _ in range(runs):
            ours.append((await agentlog_verify(root_id))[0])
            theirs.append((await baseline_verify(conn, root_id))[0])
    finally:
        await conn.close()
    return statistics.median(ours), statistics.median(theirs)


def peak_rss_added(url: str, root_id: uuid.UUID, mode: str) -> dict:
    """Runs one verification in a fresh process and reports how far it raised the peak RSS."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.verify", url, str(root_id), mode],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=600,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def memory_mb(field: str) -> float:
    """VmRSS (resident now) or VmHWM (the peak so far) of this process, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


async def measure_rss(url: str, root_id: uuid.UUID, mode: str) -> dict:
    from tortoise import Tortoise

    from models import db

    await db.open_database(url)
    try:
        before = memory_mb("VmRSS")
        if mode == "agentlog":
            seconds, count = await agentlog_verify(root_id)
        else:
            conn = await asyncpg.connect(url)
            try:
                seconds, count = await baseline_verify(conn, root_id)
            finally:
                await conn.close()
        return {"lines": count, "seconds": round(seconds, 2), "before_mb": round(before, 1),
                "added_mb": round(memory_mb("VmHWM") - before, 1)}
    finally:
        await Tortoise.close_connections()


if __name__ == "__main__":
    url, root_id, mode = sys.argv[1], uuid.UUID(sys.argv[2]), sys.argv[3]
    print(json.dumps(asyncio.run(measure_rss(url, root_id, mode))))
