"""Each shortcut of graph/fast/ against stock, on the tree_read and paging workloads: does it still pay?

Run by hand against a PostgreSQL server (a fresh database is made and dropped):

    python -m bench.shortcuts [--server URL] [--tasks 10000] [--record-lines 100000] [--rounds 3]

One database holds bench/paging.py's shop (`--tasks` tasks in trees of 100, varied for the filters), one
1,000-task tree of bench/tree_read.py and a chain of `--record-lines` lines. The same requests go to apps in this
process: `stock`, `fast`, and `fast` with one shortcut taken out, by patching it out here (the server has no
switch per shortcut). Workloads: tree_read's nested read of the 1,000-task tree as its requester; paging's search
page, filtered page, and the long record paged to its end with `first: 5000`, as a manager and auditor. In each
round every variant answers every workload in turn (a few requests each, the median kept); printed per workload
and variant are the median over rounds with its min and max, and what each shortcut saves:
(fast without it - fast) / (fast without it). Every variant's answers are checked equal to stock's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import asyncpg
import httpx
from strawberry.schema.name_converter import NameConverter
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext as Stock
from tortoise import Tortoise

import graph.fast.plan
import graph.api.query
import graph.api.schema
import graph.types.agent_task as agent_task
from bench.common import SERVER, TENANT, fresh_database
from bench.paging import FILTERED, PAGE, RECORD, SEARCH, store_shop
from bench.tree_read import CALL_COLUMNS, TASK_COLUMNS, fake_tree, nested_query
from bench.verify import build_chain
from graph.fast.execution import TreeExecution
from models.line_columns import INSERTED
from resolvers.read.rows import LINE_COLUMNS
from permissions.tokens import issue_token

Patch = Callable[[], contextlib.AbstractContextManager]


@contextlib.contextmanager
def patched(target: Any, **values: Any) -> Iterator[None]:
    old = {name: getattr(target, name) for name in values}
    for name, value in values.items():
        setattr(target, name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            setattr(target, name, value)


@contextlib.contextmanager
def chained(*managers: contextlib.AbstractContextManager) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for manager in managers:
            stack.enter_context(manager)
        yield


def executor_without(method: str) -> type:
    return type(f"Without_{method}", (TreeExecution,), {method: getattr(Stock, method)})


async def no_prefetch(*args: Any) -> None:
    return None


def eager_lines(info: Any, lines: Any, groups: Callable[[Any], frozenset]) -> list:
    return [agent_task.WholeLine(line, groups(line)) for line in lines]


BUILT_WITH: dict[str, Patch] = {
    "plain fields read straight": lambda: patched(graph.api.schema, TreeExecution=executor_without("execute_fields")),
    "coroutines started at once": lambda: patched(
        graph.api.schema, TreeExecution=executor_without("complete_awaitable_value")),
    "lists completed in one loop": lambda: patched(graph.api.schema, TreeExecution=executor_without("complete_list_value")),
    "null defaults left out (arguments.py)": lambda: patched(graph.api.schema, null_defaults_left_out=lambda *_: None),
    "argument names kept (arguments.py)": lambda: patched(graph.api.schema, RememberedArgumentNames=NameConverter),
}
"""Shortcuts taken out when the app's schema is built."""

ASKED_WITH: dict[str, Patch] = {
    "reading ahead (plan.py)": lambda: patched(graph.api.query, prefetch=no_prefetch),
    "lazy objects (lazy.py)": lambda: chained(
        patched(agent_task, TaskView=agent_task.WholeTask, line_views=eager_lines),
        patched(graph.fast.plan, line_columns=lambda selections: LINE_COLUMNS),
    ),
}
"""Shortcuts taken out while the app answers. A line built whole reads every column, so lazy objects go together
with the read-ahead plan's narrowing of the line columns read."""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Variant:
    def __init__(self, name: str, url: str, executor: str, built: Patch | None = None, asked: Patch | None = None):
        from graph.app import create_app
        from models.settings import load

        with built() if built else contextlib.nullcontext():
            app = create_app(load(database_url=url, executor=executor))
        self.name = name
        self.asked = asked
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench")

    async def ask(self, token: str, query: str, variables: dict | None = None) -> bytes:
        with self.asked() if self.asked else contextlib.nullcontext():
            response = await self.http.post("/graphql", json={"query": query, "variables": variables or {}},
                                            headers={"Authorization": f"Bearer {token}"})
        body = response.json()
        if response.status_code != 200 or body.get("errors"):
            raise AssertionError((self.name, body))
        return response.content


Workload = Callable[[Variant], Awaitable[bytes]]


def workloads(tree_root: uuid.UUID, chain_root: uuid.UUID) -> dict[str, tuple[int, Workload]]:
    mia = issue_token("mia", TENANT, roles=["Mechanic"], name="Mia")
    noor = issue_token("noor", TENANT, roles=["Manager", "Auditor"])

    async def record_to_the_end(variant: Variant) -> bytes:
        after, pages = 0, []
        while True:
            answer = await variant.ask(noor, RECORD, {"id": str(chain_root), "after": after})
            page = json.loads(answer)["data"]["task"]["record"]
            pages.append(answer)
            if len(page) < PAGE:
                return b"[" + b",".join(pages) + b"]"
            after = page[-1]["seq"]

    return {
        "tree_read": (5, lambda v: v.ask(mia, nested_query(), {"id": str(tree_root)})),
        "search_page": (10, lambda v: v.ask(noor, SEARCH)),
        "filtered_page": (10, lambda v: v.ask(noor, FILTERED)),
        "record_pages": (3, record_to_the_end),
    }


async def store_all(url: str, tasks: int, record_lines: int) -> tuple[uuid.UUID, uuid.UUID]:
    say(f"storing {tasks:,} tasks, a 1,000-task tree and a {record_lines:,}-line chain…")
    await store_shop(url, tasks)
    tree = fake_tree(1000)
    conn = await asyncpg.connect(url)
    try:
        await conn.copy_records_to_table("agent_task", records=tree.tasks, columns=TASK_COLUMNS)
        await conn.copy_records_to_table("trace_event", records=tree.lines, columns=INSERTED)
        await conn.copy_records_to_table("llm_call", records=tree.calls, columns=CALL_COLUMNS)
    finally:
        await conn.close()
    chain = await build_chain(url, record_lines)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("ANALYZE")
    finally:
        await conn.close()
    return tree.root, chain


async def run(server: str, tasks: int, record_lines: int, rounds: int) -> dict:
    from models import db

    async with fresh_database(server) as url:
        await db.open_database(url)
        try:
            tree_root, chain_root = await store_all(url, tasks, record_lines)
            variants = [Variant("stock", url, "stock"), Variant("fast", url, "fast")]
            variants += [Variant(f"fast without {name}", url, "fast", built=patch) for name, patch in BUILT_WITH.items()]
            variants += [Variant(f"fast without {name}", url, "fast", asked=patch) for name, patch in ASKED_WITH.items()]
            work = workloads(tree_root, chain_root)
            times: dict[tuple[str, str], list[float]] = {(w, v.name): [] for w in work for v in variants}
            for workload, (_, ask) in work.items():
                expected = json.loads(await ask(variants[0]))
                for variant in variants[1:]:
                    if json.loads(await ask(variant)) != expected:
                        raise AssertionError(f"{variant.name} answered {workload} unlike stock")
            for n in range(rounds):
                for workload, (runs, ask) in work.items():
                    for variant in variants:
                        spent = []
                        for _ in range(runs):
                            start = time.perf_counter()
                            await ask(variant)
                            spent.append((time.perf_counter() - start) * 1000)
                        times[(workload, variant.name)].append(statistics.median(spent))
                say(f"round {n + 1} of {rounds} done")
            for variant in variants:
                await variant.http.aclose()
        finally:
            await Tortoise.close_connections()
    return {"tasks": tasks, "record_lines": record_lines, "rounds": rounds,
            "ms": {f"{w} | {v}": [round(t, 1) for t in ts] for (w, v), ts in times.items()}}


def report(found: dict) -> None:
    by_workload: dict[str, dict[str, list[float]]] = {}
    for key, values in found["ms"].items():
        workload, variant = key.split(" | ")
        by_workload.setdefault(workload, {})[variant] = values
    for workload, variants in by_workload.items():
        fast = statistics.median(variants["fast"])
        print(f"\n{workload}")
        for variant, values in variants.items():
            median = statistics.median(values)
            saving = f"  saves {(median - fast) / median:+.0%}" if variant.startswith("fast without") else ""
            print(f"  {variant:<50} {median:>9.1f} ms  (min {min(values):.1f}, max {max(values):.1f}){saving}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=SERVER, help="a PostgreSQL server URL, without a database name")
    parser.add_argument("--tasks", type=int, default=10_000, help="tasks in the paging shop (ten lines each)")
    parser.add_argument("--record-lines", type=int, default=100_000, help="lines of the chain paged through")
    parser.add_argument("--rounds", type=int, default=3, help="rounds in which every variant runs every workload")
    parser.add_argument("--json", help="also write the figures of every round to this file")
    args = parser.parse_args()
    found = asyncio.run(run(args.server, args.tasks, args.record_lines, args.rounds))
    report(found)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(found, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
