"""Verify under load: `verify_task` on a tree while eight writers append to it, against the same check idle.

One tree of a root and seven running sub-tasks, CHAIN lines long, written through the kit's own write path.
The idle checks come first; then one writer per task appends tool calls through `record_tool_call`, from a
process of its own (as another server process would), while the tree is checked RUNS times. Every check
must be intact and cover the head read just before it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import time
import uuid
from typing import Any

from tortoise import Tortoise

from bench.common import TENANT
from models import AgentTask, db
from permissions.principal import Principal
from resolvers.write import batch, kit
from resolvers.read.verify import verify_task

CHAIN = 20_000
WRITERS = 8
RUNS = 7
BATCH = 1000
KIT = Principal(sub="bench-kit", tenant=TENANT, kit=True)


async def build_tree() -> list[uuid.UUID]:
    """A root and seven sub-tasks, all running, with CHAIN lines spread over them."""
    await kit.register_agent(KIT, {"name": "Estimator", "roles": ["Helper"]})
    start = {"agent": "Estimator", "skill": "EstimateRepair", "actor": {"id": "estimator"}}
    root = await kit.start_task(KIT, dict(start))
    tasks = [root.id] + [(await kit.start_task(KIT, {**start, "parent": str(root.id)})).id for _ in range(WRITERS - 1)]
    written = WRITERS
    while written < CHAIN:
        task = tasks[(written // BATCH) % len(tasks)]
        size = min(BATCH, CHAIN - written)
        lines = [{"tool_call": {"tool": "PartsFor", "tool_call_id": f"c{written + i}", "input": {"n": written + i}}}
                 for i in range(size)]
        await batch.record_lines(KIT, {"task": str(task), "lines": lines})
        written += size
    return tasks


async def timed_check(root: uuid.UUID) -> tuple[float, int]:
    """Seconds for one check, and by how many lines it covered more than the head read just before it."""
    head = (await AgentTask.get(id=root)).chain_length
    start = time.perf_counter()
    check = await verify_task(root)
    seconds = time.perf_counter() - start
    if check is None or not check.intact or check.lines < head:
        raise AssertionError(f"a check under load was wrong: {check}, head {head}")
    return seconds, check.lines - head


def write_until(url: str, tasks: list[str], stop: Any, appended: Any) -> None:
    """One writer per task, appending tool calls until `stop` is set; run in a process of its own."""

    async def write() -> None:
        await db.open_database(url)
        try:
            async def writer(i: int, task: str) -> None:
                while not stop.is_set():
                    await kit.record_tool_call(KIT, {"task": task, "tool": "PartsFor", "input": {"writer": i}})
                    appended[i] += 1

            await asyncio.gather(*(writer(i, task) for i, task in enumerate(tasks)))
        finally:
            await Tortoise.close_connections()

    asyncio.run(write())


async def measure(url: str) -> dict:
    tasks = await build_tree()
    root = tasks[0]
    await timed_check(root)
    idle = [(await timed_check(root))[0] for _ in range(RUNS)]

    context = multiprocessing.get_context("spawn")
    stop, appended = context.Event(), context.Array("i", WRITERS)
    writers = context.Process(target=write_until, args=(url, [str(t) for t in tasks], stop, appended))
    writers.start()
    try:
        while sum(appended) < WRITERS:
            await asyncio.sleep(0.05)
        before, start = sum(appended), time.perf_counter()
        loaded = [await timed_check(root) for _ in range(RUNS)]
        elapsed, during = time.perf_counter() - start, sum(appended) - before
    finally:
        stop.set()
        writers.join(timeout=60)
    seconds = [s for s, _ in loaded]
    return {
        "idle_s": statistics.median(idle), "idle_range": (min(idle), max(idle)),
        "loaded_s": statistics.median(seconds), "loaded_range": (min(seconds), max(seconds)),
        "lines_per_s": during / elapsed, "grew_during_check": max(grew for _, grew in loaded),
    }
