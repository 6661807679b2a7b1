"""One nested GraphQL read of a whole work tree, timed against a hand-written asyncpg read of the same data.

Run by hand against a PostgreSQL server (a fresh database is made and dropped for each tree):

    python -m bench.tree_read [--server postgres://postgres@127.0.0.1:5432] [--runs 20]

Each tree has depth 5, a fan-out of about 4 at 1,000 tasks, and 10 lines and 3 meter rows per task. The
request asks, five levels of children deep, for each task's status, all-in cost and its trace's sentences
and kinds; it goes through the ASGI app with a requester's token. The baseline fetches the same rows with
asyncpg on a warm pool, assembles the same answer by hand and encodes it with orjson, as agentlog's answers
are, behind a plain Starlette route reached through the same in-process HTTP client; both answers are
checked equal. What the baseline leaves out is agentlog's own work: the token, the access decision per
task, GraphQL parsing, validation and execution. The two take turns, and the median of each is printed with
their ratio and the SQL statements agentlog's request sent. Trees of 100, 1,000 and 10,000 tasks are read;
the last row reads 1,000 again with the garbage collector set as the server sets it once started
(`graph.app.settle_heap`: `gc.freeze()` and `AGENTLOG_GC_YOUNG`), which then holds for both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import asyncpg
import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bench.common import fresh_database
from graph.app import create_app, settle_heap
from models.settings import load
from models.record.chain import GENESIS, Line, compact_json, seal
from models.line_columns import INSERTED, inserted_row
from permissions.tokens import issue_token
from tests.statements import counted

TENANT = "bench-shop"
DEPTH = 5
SERVER = os.environ.get("AGENTLOG_BENCH_SERVER", "postgres://postgres@127.0.0.1:5432")

TASK_COLUMNS = (
    "id", "tenant", "agent", "skill", "cause", "about", "trigger", "given", "requester_id", "requester_name",
    "actor_id", "actor_name", "status", "outcome", "result", "limit_micros", "started_at", "ended_at", "session",
    "parent_id", "root_id", "depth", "sequence", "path", "chain_length", "chain_head",
)
CALL_COLUMNS = (
    "id", "tenant", "task_id", "task_path", "turn", "agent", "model", "provider", "route_rule", "attempts",
    "input_tokens", "output_tokens", "cost_micros", "duration_ms", "at", "by_tool",
)
HELP_COLUMNS = ("id", "tenant", "task_id", "root_id", "question", "asked_of_id", "asked_of_name", "asked_at")


def level_sizes(tasks: int, depth: int = DEPTH) -> list[int]:
    """Tasks per level, root first: an even fan-out that adds up to `tasks` over depth + 1 levels."""
    low, high = 1.0, float(tasks)
    for _ in range(60):
        fan = (low + high) / 2
        low, high = (fan, high) if sum(fan**d for d in range(depth + 1)) < tasks else (low, fan)
    sizes = [max(1, round(low**d)) for d in range(depth + 1)]
    sizes[0] = 1
    sizes[-1] += tasks - sum(sizes)
    return sizes


@dataclass
class Tree:
    root: uuid.UUID
    tasks: list[tuple] = field(default_factory=list)
    lines: list[tuple] = field(default_factory=list)
    calls: list[tuple] = field(default_factory=list)
    helps: list[tuple] = field(default_factory=list)


@dataclass
class Node:
    id: uuid.UUID
    parent: Node | None
    depth: int
    sequence: int
    path: str
    children: list[Node] = field(default_factory=list)


def shape(tasks: int) -> Node:
    root_id = uuid.uuid4()
    root = Node(root_id, None, 0, 1, str(root_id))
    level = [root]
    for depth, size in enumerate(level_sizes(tasks)[1:], start=1):
        below = []
        for i in range(size):
            parent = level[i % len(level)]
            tid = uuid.uuid4()
            node = Node(tid, parent, depth, len(parent.children) + 1, f"{parent.path}/{tid}")
            parent.children.append(node)
            below.append(node)
        level = below
    return root


def depth_first(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


STEPS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("STARTED", {}),
    ("MODEL_CALL", {"turn": 1, "micros": 200, "response": {"toolCalls": [{"name": "PartsFor"}]}}),
    ("TOOL_CALL", {"tool": "PartsFor", "id": "c1", "payload": {"fault": "rear brake does not bite"}}),
    ("TOOL_RESULT", {"tool": "PartsFor", "id": "c1", "payload": ["brake pads", "cable"]}),
    ("MODEL_CALL", {"turn": 2, "micros": 300, "response": {"toolCalls": [{"name": "Quote"}]}}),
    ("TOOL_CALL", {"tool": "Quote", "id": "c2", "payload": {"parts": ["brake pads", "cable"]}}),
    ("MODEL_CALL", {"by_tool": "Quote", "micros": 50, "response": {"text": "42.50"}}),
    ("TOOL_RESULT", {"tool": "Quote", "id": "c2", "payload": {"total": "42.50"}}),
    ("ASKED_FOR_HELP", {"payload": "Shall I order the pads?"}),
    ("ENDED", {"payload": {"hours": 1, "summary": "New pads and a cable."}}),
)


def sentence(kind: str, step: dict[str, Any]) -> str:
    if kind == "MODEL_CALL":
        by = f", called by {step['by_tool']}," if "by_tool" in step else ""
        return f"Everyday (chosen by llm:default){by} answered; it cost ${step['micros'] / 1e6:.4f}."
    if kind in ("TOOL_CALL", "TOOL_RESULT"):
        return f"{step['tool']} {'was asked for' if kind == 'TOOL_CALL' else 'answered'}."
    return {"STARTED": "Estimator started EstimateRepair, for Mia.", "ASKED_FOR_HELP": "It asked Noor for help.",
            "ENDED": "The work is done."}[kind]


def fake_tree(tasks: int, tenant: str = TENANT, started: datetime | None = None) -> Tree:
    """A finished tree of `tasks` tasks with a sealed chain: 10 lines and 3 meter rows per task."""
    root = shape(tasks)
    tree = Tree(root.id)
    started = started or datetime.now(timezone.utc) - timedelta(days=1)
    seq, head = 0, GENESIS
    for n, node in enumerate(depth_first(root)):
        begin = started + timedelta(seconds=n)
        for k, (kind, step) in enumerate(STEPS):
            seq += 1
            at = begin + timedelta(milliseconds=k)
            line = Line(seq, kind, str(node.id), at, sentence(kind, step), None, None, None, "", "", "", "")
            call_id = None
            if kind == "MODEL_CALL":
                call_id = uuid.uuid4()
                line.model, line.route_rule, line.attempts = "Everyday", "llm:default", 1
                line.cost_micros, line.input_tokens, line.output_tokens, line.duration_ms = step["micros"], 120, 30, 40
                line.payload = compact_json({"systemPrompt": "You estimate bicycle repairs.",
                                             "messages": [{"role": "user", "content": "T-7"}],
                                             "response": step["response"]})
                tree.calls.append((call_id, tenant, node.id, node.path, step.get("turn"), "Estimator", "Everyday",
                                   "scripted", "llm:default", 1, 120, 30, step["micros"], 40, at, step.get("by_tool")))
            elif kind in ("TOOL_CALL", "TOOL_RESULT"):
                line.tool, line.tool_call_id = step["tool"], step["id"]
                line.payload = compact_json(step["payload"])
                if kind == "TOOL_RESULT":
                    line.is_error, line.duration_ms = False, 7
            elif kind == "STARTED":
                line.payload = "Ticket T-7: rear brake does not bite."
            elif kind == "ASKED_FOR_HELP":
                line.payload = step["payload"]
                tree.helps.append((uuid.uuid4(), tenant, node.id, root.id, step["payload"], "noor", "Noor", at))
            else:
                line.payload = compact_json(step["payload"])
            head = seal(line, head).hash
            tree.lines.append(inserted_row(tenant, root.id, line, call_id=call_id, by_tool=step.get("by_tool")))
        ended = begin + timedelta(milliseconds=len(STEPS))
        tree.tasks.append((
            node.id, tenant, "Estimator", "EstimateRepair", "REQUEST" if node.parent is None else "SPAWN",
            "Ticket T-7", "Mia asked for an estimate of T-7.", "Ticket T-7: rear brake does not bite.",
            "mia" if node.parent is None else None, "Mia" if node.parent is None else None, "estimator", "Estimator",
            "DONE", "Estimated one hour.", compact_json({"hours": 1}), 50000, begin, ended, "chat-7",
            node.parent.id if node.parent else None, root.id, node.depth, node.sequence, node.path, 0, GENESIS,
        ))
    root_row = list(tree.tasks[0])
    root_row[-2:] = [seq, head]
    tree.tasks[0] = tuple(root_row)
    return tree


async def store(url: str, tree: Tree) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "INSERT INTO agent (tenant, name, purpose, roles, transcript_readers, logging) "
            "VALUES ($1, 'Estimator', 'Estimates bicycle repairs.', '[\"Helper\"]', '[]', 'FULL')", TENANT)
        await conn.execute(
            "INSERT INTO policies (tenant, supervises_agents, audits_agents, teaches_agents, reads_all_agent_work, "
            "erases_agent_records, holds_records) VALUES ($1, '[\"Manager\"]', '[\"Auditor\"]', '[]', '[]', '[]', '[]')",
            TENANT)
        await conn.copy_records_to_table("agent_task", records=tree.tasks, columns=TASK_COLUMNS)
        await conn.copy_records_to_table("trace_event", records=tree.lines, columns=INSERTED)
        await conn.copy_records_to_table("llm_call", records=tree.calls, columns=CALL_COLUMNS)
        await conn.copy_records_to_table("agent_help", records=tree.helps, columns=HELP_COLUMNS)
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


TASK_SELECTION = "id status cost { allInMicros } trace { summary kind }"


def nested_query(levels: int = DEPTH) -> str:
    body = TASK_SELECTION
    for _ in range(levels):
        body = f"{TASK_SELECTION} children {{ {body} }}"
    return f"query($id: ID!) {{ task(id: $id) {{ {body} }} }}"


async def agentlog_read(http: httpx.AsyncClient, root: uuid.UUID, token: str) -> bytes:
    response = await http.post(
        "/graphql", json={"query": nested_query(), "variables": {"id": str(root)}},
        headers={"Authorization": f"Bearer {token}"},
    )
    response.raise_for_status()
    return response.content


async def baseline_read(pool: asyncpg.Pool, root: uuid.UUID) -> bytes:
    """The same tree, fetched with three statements and assembled by hand."""
    async with pool.acquire() as conn:
        path = await conn.fetchval("SELECT path FROM agent_task WHERE tenant = $1 AND id = $2", TENANT, root)
        below = path + "/%"
        tasks = await conn.fetch(
            "SELECT id, parent_id, status, path FROM agent_task WHERE tenant = $1 AND depth <= $4 "
            "AND (path = $2 OR path LIKE $3) ORDER BY sequence", TENANT, path, below, DEPTH)
        lines = await conn.fetch(
            "SELECT task_id, summary, kind FROM trace_event WHERE tenant = $1 AND root_id = $2 ORDER BY seq",
            TENANT, root)
        meter = await conn.fetch(
            "SELECT task_path, sum(cost_micros)::bigint AS micros FROM llm_call WHERE tenant = $1 "
            "AND (task_path = $2 OR task_path LIKE $3) GROUP BY task_path", TENANT, path, below)
    all_in: dict[str, int] = defaultdict(int)
    for row in meter:
        parts = row["task_path"].split("/")
        for end in range(1, len(parts) + 1):
            all_in["/".join(parts[:end])] += row["micros"]
    trace: dict[uuid.UUID, list[dict]] = defaultdict(list)
    for line in lines:
        trace[line["task_id"]].append({"summary": line["summary"], "kind": line["kind"]})
    nodes: dict[uuid.UUID, dict] = {}
    for task in tasks:
        nodes[task["id"]] = {
            "id": str(task["id"]), "status": task["status"], "cost": {"allInMicros": all_in[task["path"]]},
            "trace": trace[task["id"]], "children": [],
        }
    for task in tasks:
        if task["parent_id"] in nodes:
            nodes[task["parent_id"]]["children"].append(nodes[task["id"]])
    for task in tasks:
        if nodes[task["id"]]["children"] == [] and task["path"].count("/") == DEPTH:
            del nodes[task["id"]]["children"]
    return orjson.dumps({"data": {"task": nodes[root]}})


def baseline_app(pool: asyncpg.Pool) -> Starlette:
    """The baseline behind one plain route, so that it is reached through the same HTTP client as agentlog."""

    async def tree(request: Request) -> Response:
        return Response(await baseline_read(pool, uuid.UUID(request.path_params["root"])),
                        media_type="application/json")

    return Starlette(routes=[Route("/tree/{root}", tree)])


async def baseline_request(http: httpx.AsyncClient, root: uuid.UUID) -> bytes:
    response = await http.get(f"/tree/{root}")
    response.raise_for_status()
    return response.content


async def timed(reads: dict[str, Callable[[], Any]], runs: int) -> dict[str, tuple[float, bytes]]:
    """Each read once to warm up, then `runs` rounds taking turns; the median milliseconds and last answer of each."""
    answers = {name: await read() for name, read in reads.items()}
    times: dict[str, list[float]] = {name: [] for name in reads}
    for _ in range(runs):
        for name, read in reads.items():
            start = time.perf_counter()
            answers[name] = await read()
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: (statistics.median(times[name]), answers[name]) for name in reads}


async def measure(tasks: int, runs: int, server: str = SERVER, frozen: bool = False) -> dict:
    """Median milliseconds of agentlog's request and of the baseline, their ratio, and statements per request.

    `frozen` sets the garbage collector as the served app does once started (`settle_heap`), after the
    warm-up; both sides run in this process, so both then have it.
    """
    tree = fake_tree(tasks)
    thresholds = gc.get_threshold()
    async with fresh_database(server) as url:
        await store(url, tree)
        token = issue_token("mia", TENANT, roles=["Mechanic"], name="Mia")
        app = create_app(load(database_url=url))
        transport = httpx.ASGITransport(app=app)
        pool = await asyncpg.create_pool(url, min_size=1, max_size=1)
        raw = httpx.ASGITransport(app=baseline_app(pool))
        try:
            async with (httpx.AsyncClient(transport=transport, base_url="http://bench") as http,
                        httpx.AsyncClient(transport=raw, base_url="http://bench") as plain):
                with counted() as seen:
                    await agentlog_read(http, tree.root, token)
                if frozen:
                    settle_heap(app.state.settings.gc_young)
                found = await timed({
                    "agentlog": lambda: agentlog_read(http, tree.root, token),
                    "baseline": lambda: baseline_request(plain, tree.root),
                }, runs)
        finally:
            gc.unfreeze()
            gc.set_threshold(*thresholds)
            await pool.close()
    (agentlog_ms, ours), (baseline_ms, theirs) = found["agentlog"], found["baseline"]
    if json.loads(ours) != json.loads(theirs):
        raise AssertionError("agentlog and the baseline answered differently")
    return {
        "agentlog_ms": round(agentlog_ms, 2),
        "baseline_ms": round(baseline_ms, 2),
        "ratio": round(agentlog_ms / baseline_ms, 2),
        "statements": len(seen),
    }


async def main(server: str, runs: int) -> None:
    print(f"{'tasks':>7} {'gc':>7} {'agentlog ms':>12} {'baseline ms':>12} {'ratio':>6} {'statements':>11}")
    plan = [(100, runs, False), (1000, runs, False), (10_000, max(3, runs // 4), False), (1000, runs, True)]
    for tasks, n, frozen in plan:
        result = await measure(tasks, n, server, frozen)
        print(f"{tasks:>7} {'frozen' if frozen else 'default':>7} {result['agentlog_ms']:>12} "
              f"{result['baseline_ms']:>12} {result['ratio']:>6} {result['statements']:>11}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=SERVER, help="a PostgreSQL server URL, without a database name")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per tree; the median is printed")
    args = parser.parse_args()
    asyncio.run(main(args.server, args.runs))
