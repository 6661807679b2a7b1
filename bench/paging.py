"""Paging and finding on PostgreSQL, against raw asyncpg running the very statements agentlog sent.

Run by hand: python -m bench.paging [--tasks 100000] [--record-lines 1000000] [--runs 20] [--server URL]

A fresh database gets `--tasks` tasks (trees of 100, ten lines and three meter rows a task, so ten lines a
task in all) with varied entity types, workflow runs, models and `about` words, and one more tree whose
chain is `--record-lines` long. Each GraphQL request goes through the ASGI app in this process; the
statements its ORM connection sent are kept, with when each began and ended, and then run again with asyncpg
on a warm pool of its own: that is the baseline, the same SQL without agentlog around it, statements that ran
side by side in agentlog's request (a page and its totalCount) side by side again, the others one after
another. The baseline answers with the rows it fetched, encoded by orjson, from a plain Starlette route
reached through the same in-process HTTP client; it leaves out the token, the access decision and GraphQL.
Timings alternate between the two; the figures are medians with the spread (min to max) beside them. Memory is measured in a fresh process
paging through the long record with `first: 5000`, as the verify memory figure is: peak RSS added.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from tortoise import Tortoise
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection

from bench.common import SERVER, TENANT, Figure, fresh_database, lower_is_better, table
from bench.query_plans import vary
from bench.tree_read import CALL_COLUMNS, TASK_COLUMNS, fake_tree, store
from bench.verify import build_chain, memory_mb
from models.line_columns import INSERTED
from permissions.tokens import issue_token

ROOT = Path(__file__).parent.parent
TREE = 100
PAGE = 5000
SEARCH = """query { tasks(filter: {search: "brake wheel"}, first: 50) { totalCount edges { node { id about } } } }"""
FILTERED = """query { tasks(filter: {entityType: "Invoice", agentIn: ["Estimator"], workflowRun: "run-3"}, first: 50) {
  totalCount edges { cursor node { id agent status startedAt } } } }"""
RECORD = """query($id: ID!, $after: Int) { task(id: $id) { record(first: 5000, after: $after) { seq kind summary hash } } }"""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def store_shop(url: str, tasks: int) -> None:
    """`tasks` tasks in trees of 100, started a minute apart, then varied for the filters."""
    begin = datetime.now(timezone.utc) - timedelta(days=90)
    first = fake_tree(TREE, TENANT, begin)
    await store(url, first)
    conn = await asyncpg.connect(url)
    try:
        for n in range(1, max(tasks // TREE, 1)):
            tree = fake_tree(TREE, TENANT, begin + timedelta(minutes=n))
            await conn.copy_records_to_table("agent_task", records=tree.tasks, columns=TASK_COLUMNS)
            await conn.copy_records_to_table("trace_event", records=tree.lines, columns=INSERTED)
            await conn.copy_records_to_table("llm_call", records=tree.calls, columns=CALL_COLUMNS)
            if n % 100 == 0:
                say(f"  {n * TREE:,} tasks stored")
    finally:
        await conn.close()
    await vary(url)


@dataclass
class Sent:
    sql: str
    values: list[Any]
    began: float
    ended: float = 0.0


def capture() -> list[Sent]:
    """Wraps the ORM connection's statement methods; the list fills with each statement and when it ran."""
    sent: list[Sent] = []
    cls = type(get_connection("default"))
    for name in ("execute_query", "execute_query_dict"):
        original = getattr(cls, name)

        async def run(self: BaseDBAsyncClient, sql: str, values: list | None = None, _original: Any = original) -> Any:
            statement = Sent(sql, list(values or []), time.perf_counter())
            sent.append(statement)
            try:
                return await _original(self, sql, values)
            finally:
                statement.ended = time.perf_counter()

        setattr(cls, name, run)
    return sent


def waves(statements: list[Sent]) -> list[list[Sent]]:
    """The statements in the order sent, those that ran at the same time grouped together."""
    grouped: list[list[Sent]] = []
    until = 0.0
    for statement in statements:
        if grouped and statement.began < until:
            grouped[-1].append(statement)
            until = max(until, statement.ended)
        else:
            grouped.append([statement])
            until = statement.ended
    return grouped


class Bench:
    """One app in this process, and beside it a plain route replaying with asyncpg what the app sent."""

    def __init__(self, url: str) -> None:
        from graph.app import create_app
        from models.settings import load

        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(load(database_url=url))), base_url="http://bench")
        replay = Starlette(routes=[Route("/replay", self.answer, methods=["POST"])])
        self.plain = httpx.AsyncClient(transport=httpx.ASGITransport(app=replay), base_url="http://bench")
        self.sent = capture()
        self.replaying: list[Sent] = []
        self.url = url
        self.headers = {"Authorization": f"Bearer {issue_token('noor', TENANT, roles=['Manager', 'Auditor'])}"}

    async def __aenter__(self) -> Bench:
        self.pool = await asyncpg.create_pool(self.url, min_size=2, max_size=4)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.pool.close()
        await self.http.aclose()
        await self.plain.aclose()

    async def ask(self, query: str, variables: dict | None = None) -> tuple[float, dict, list[Sent]]:
        self.sent.clear()
        start = time.perf_counter()
        body = (await self.http.post("/graphql", json={"query": query, "variables": variables or {}},
                                     headers=self.headers)).json()
        seconds = time.perf_counter() - start
        if body.get("errors"):
            raise AssertionError(body["errors"])
        return seconds, body["data"], list(self.sent)

    async def replay(self, statements: list[Sent]) -> float:
        self.replaying = statements
        start = time.perf_counter()
        (await self.plain.post("/replay")).raise_for_status()
        return time.perf_counter() - start

    async def fetch(self, statement: Sent) -> list:
        async with self.pool.acquire() as conn:
            return await conn.fetch(statement.sql, *statement.values)

    async def answer(self, request: Request) -> Response:
        rows: list[tuple] = []
        for wave in waves(self.replaying):
            for found in await asyncio.gather(*(self.fetch(statement) for statement in wave)):
                rows.extend(tuple(row) for row in found)
        return Response(orjson.dumps({"data": rows}, default=str), media_type="application/json")


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.1f} ms (min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})"


async def one_request(bench: Bench, name: str, query: str, runs: int, most: float) -> tuple[Figure, dict]:
    ours, theirs = [], []
    await bench.replay((await bench.ask(query))[2])
    for _ in range(runs):
        seconds, data, statements = await bench.ask(query)
        ours.append(seconds)
        theirs.append(await bench.replay(statements))
    say(f"{name}: agentlog {spread(ours)}; baseline {spread(theirs)}; "
        f"{len(statements)} statements in {len(waves(statements))} steps; "
        f"totalCount {data['tasks']['totalCount']}")
    figure = lower_is_better(name, statistics.median(ours) * 1000, statistics.median(theirs) * 1000, "ms", most)
    return figure, {"agentlog_ms": [round(s * 1000, 2) for s in ours], "baseline_ms": [round(s * 1000, 2) for s in theirs]}


async def record_to_the_end(bench: Bench, root: uuid.UUID, runs: int) -> tuple[Figure, dict]:
    ours, theirs = [], []
    for _ in range(runs):
        after, spent, replayed, lines = 0, 0.0, 0.0, 0
        while True:
            seconds, data, statements = await bench.ask(RECORD, {"id": str(root), "after": after})
            page = data["task"]["record"]
            spent += seconds
            replayed += await bench.replay(statements)
            lines += len(page)
            if len(page) < PAGE:
                break
            after = page[-1]["seq"]
        ours.append(spent)
        theirs.append(replayed)
    say(f"record paged to the end ({lines:,} lines): agentlog {spread(ours)}; baseline {spread(theirs)}")
    figure = lower_is_better("record_pages", statistics.median(ours), statistics.median(theirs), "s", 3)
    return figure, {"lines": lines, "agentlog_s": [round(s, 3) for s in ours], "baseline_s": [round(s, 3) for s in theirs]}


def memory_figure(url: str, root: uuid.UUID, lines: int) -> tuple[Figure, dict]:
    done = subprocess.run([sys.executable, "-m", "bench.paging", "--memory", url, str(root)],
                          cwd=ROOT, capture_output=True, text=True, check=True, timeout=3600)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    say(f"record paged in a fresh process: {found}")
    meets = found["added_mb"] < 100 and found["lines"] == lines
    return Figure("record_pages_memory", found["added_mb"], None, "MB peak RSS added", "< 100 MB", meets), found


async def page_through_measuring(url: str, root: uuid.UUID) -> dict:
    from models import db

    await db.open_database(url)
    try:
        async with Bench(url) as bench:
            await bench.ask(RECORD, {"id": str(root), "after": 0})
            before = memory_mb("VmRSS")
            after, lines = 0, 0
            while True:
                _, data, _ = await bench.ask(RECORD, {"id": str(root), "after": after})
                page = data["task"]["record"]
                lines += len(page)
                if len(page) < PAGE:
                    break
                after = page[-1]["seq"]
            return {"lines": lines, "before_mb": round(before, 1), "added_mb": round(memory_mb("VmHWM") - before, 1)}
    finally:
        await Tortoise.close_connections()


async def run(server: str, tasks: int, record_lines: int, runs: int) -> tuple[list[Figure], dict]:
    from models import db

    async with fresh_database(server) as url:
        await db.open_database(url)
        try:
            say(f"storing {tasks:,} tasks with {tasks * 10:,} lines…")
            await store_shop(url, tasks)
            say(f"storing a tree whose chain is {record_lines:,} lines…")
            root = await build_chain(url, record_lines)
            conn = await asyncpg.connect(url)
            await conn.execute("ANALYZE")
            await conn.close()
            async with Bench(url) as bench:
                search, search_runs = await one_request(bench, "search_page", SEARCH, runs, 3)
                filtered, filtered_runs = await one_request(bench, "filtered_page", FILTERED, runs, 3)
                record, record_runs = await record_to_the_end(bench, root, max(runs // 10, 3))
            p50 = Figure("search_p50", search.agentlog, None, "ms", "< 50 ms", search.agentlog < 50)
            memory, memory_run = memory_figure(url, root, record_lines)
        finally:
            await Tortoise.close_connections()
    details = {"tasks": tasks, "lines": tasks * 10 + record_lines, "record_lines": record_lines, "search": search_runs,
               "filtered": filtered_runs, "record": record_runs, "memory": memory_run}
    return [search, p50, filtered, record, memory], details


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.paging", description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=SERVER, help="a PostgreSQL server URL, without a database name")
    parser.add_argument("--tasks", type=int, default=100_000, help="tasks in the shop (ten lines each)")
    parser.add_argument("--record-lines", type=int, default=1_000_000, help="lines of the long record paged through")
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each single request")
    parser.add_argument("--memory", nargs=2, metavar=("URL", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory:
        print(json.dumps(asyncio.run(page_through_measuring(args.memory[0], uuid.UUID(args.memory[1])))))
        return 0
    start = time.perf_counter()
    figures, details = asyncio.run(run(args.server, args.tasks, args.record_lines, args.runs))
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {args.tasks:,} tasks, {details['lines']:,} lines; "
          f"{time.perf_counter() - start:.0f} s")
    print(table(figures))
    print(json.dumps(details))
    return 0 if all(f.meets for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
