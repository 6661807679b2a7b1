"""Writes from many tenants at once on one PostgreSQL, then on a Citus cluster of 1 and of 2 workers.

    python -m bench --only citus        (or: python -m bench.citus)

Each configuration gets a fresh database and a fresh `agentlog serve` (WORKERS processes). TENANTS kits write
at once: first through `recordLines` (each tenant TREES trees of LINES lines, BATCH lines a call), then through
OTLP (each tenant EXPORTS exports of one trace of five spans). The figures are lines/s and spans/s in total, and
per node the rows each node's PostgreSQL inserted (`pg_stat_database.tup_inserted`, read before and after) and
how many of the tenants its shards hold. Every configuration runs RUNS times; the median and the range count.

The clusters are started and stopped here with `tools/citus/cluster` (as root). Citus must be installed
(`/usr/lib/postgresql/15/lib/citus.so`); with `--citus-source DIR` or AGENTLOG_BENCH_CITUS_SOURCE it is built
from that source first (`tools/citus/build`); without either, the cluster runs are skipped with a message.

Every node, the server processes and the kits share this machine's cores, so a worker brings no CPU of its own:
the per-node rows show how the writes spread, not how they would scale on separate hosts.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import asyncpg
import httpx
from tortoise import Tortoise

from bench import ingest
from bench.common import SERVER, Figure
from bench.replicas import ready
from models import db
from permissions.tokens import issue_token
from tests import citus as citus_db
from tests.otlp_spans import export, new_trace_id
from tests.servers import start_server
from tests.test_otlp_ingest import estimate

TENANTS = 16
TREES = 2
LINES = 300
BATCH = 50
EXPORTS = 10
SPANS_PER_EXPORT = 5
WORKERS = 2
RUNS = 3
STATS_S = 2.0
CITUS_SO = Path("/usr/lib/postgresql/15/lib/citus.so")
TOOLS = ingest.ROOT / "tools" / "citus"
CONFIGURATIONS = {"postgres": 0, "citus 1 worker": 1, "citus 2 workers": 2}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def citus_ready() -> str | None:
    """None when Citus can be used, else why not; builds it first from AGENTLOG_BENCH_CITUS_SOURCE if given."""
    source = os.environ.get("AGENTLOG_BENCH_CITUS_SOURCE")
    if not CITUS_SO.exists() and source:
        say(f"citus: building Citus from {source} (tools/citus/build, several minutes)…")
        subprocess.run([str(TOOLS / "build"), source], check=True)
    if not CITUS_SO.exists():
        return (f"Citus is not installed ({CITUS_SO} is missing); give --citus-source DIR or "
                "AGENTLOG_BENCH_CITUS_SOURCE to build it, as docs/scale.md says")
    if os.geteuid() != 0:
        return "tools/citus/cluster runs its nodes as the postgres user and needs root"
    return None


@dataclass
class Setup:
    url: str
    nodes: dict[str, str] = field(default_factory=dict)
    """Node name -> URL of the benchmark's database on it."""


@asynccontextmanager
async def configuration(workers: int, server: str) -> AsyncIterator[Setup]:
    """A fresh database: on `server` when `workers` is 0, else on a cluster of that many workers of its own."""
    name = f"agentlog_bench_{uuid.uuid4().hex[:8]}"
    if not workers:
        admin = await asyncpg.connect(f"{server}/postgres")
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
            try:
                yield Setup(f"{server}/{name}", {"postgres": f"{server}/{name}"})
            finally:
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
        return
    home = Path(tempfile.mkdtemp(prefix="agentlog-bench-citus-"))
    try:
        coordinator = subprocess.run([str(TOOLS / "cluster"), "start", str(home), str(workers)], check=True,
                                     capture_output=True, text=True).stdout.strip()
        ports = dict(line.split() for line in (home / "ports.txt").read_text().splitlines())
        url = f"{coordinator}/{name}"
        joined = [("127.0.0.1", int(port)) for node, port in ports.items() if node != "coordinator"]
        await citus_db.create(url, joined)
        nodes = {"coordinator": url}
        nodes.update({node: citus_db.worker_url(url, "127.0.0.1", int(port))
                      for node, port in ports.items() if node != "coordinator"})
        yield Setup(url, nodes)
    finally:
        subprocess.run([str(TOOLS / "cluster"), "stop", str(home)], check=False)
        shutil.rmtree(home, ignore_errors=True)


async def inserted(nodes: dict[str, str]) -> dict[str, int]:
    """Rows inserted so far in the benchmark's database, node by node."""
    found = {}
    for node, url in nodes.items():
        conn = await asyncpg.connect(url)
        try:
            found[node] = await conn.fetchval(
                "SELECT tup_inserted FROM pg_stat_database WHERE datname = current_database()")
        finally:
            await conn.close()
    return found


async def tenants_by_node(setup: Setup, tenants: list[str]) -> dict[str, int]:
    """How many of the tenants have their shard on each worker (a cluster only)."""
    if "coordinator" not in setup.nodes:
        return {}
    conn = await asyncpg.connect(setup.url)
    try:
        rows = await conn.fetch(
            "SELECT n.nodeport, count(*) AS tenants FROM unnest($1::text[]) AS t(tenant) "
            "JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('agent_task', t.tenant) "
            "JOIN pg_dist_node n ON n.groupid = p.groupid GROUP BY n.nodeport", tenants)
    finally:
        await conn.close()
    ports = {url.rsplit(":", 1)[1].split("/")[0]: node for node, url in setup.nodes.items()}
    return {ports.get(str(row["nodeport"]), str(row["nodeport"])): row["tenants"] for row in rows}


class TenantKit(ingest.Kit):
    def __init__(self, base: str, tenant: str) -> None:
        super().__init__(base)
        token = issue_token("bench-kit", tenant, kit=True, key=ingest.SECRET)
        self.head = (
            f"POST /graphql HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {token}\r\nContent-Length: "
        ).encode()


async def record_lines(base: str, tenants: list[str]) -> float:
    """Every tenant's trees written at once, one kit per tree; lines/s."""
    started = {}
    for tenant in tenants:
        kit = TenantKit(base, tenant)
        await kit.write("registerAgent", "RegisterAgentInput", ingest.AGENT, "name")
        started[tenant] = [(await kit.write("startTask", "StartTaskInput", ingest.START, "id"))["id"]
                           for _ in range(TREES)]
        await kit.close()
    kits = {tenant: [TenantKit(base, tenant) for _ in range(TREES)] for tenant in tenants}
    tasks = {kit: task for tenant, own in kits.items() for kit, task in zip(own, started[tenant])}
    lines = ingest.steps(0)[:LINES]

    async def tree(kit: TenantKit) -> None:
        for start in range(0, len(lines), BATCH):
            await kit.write("recordLines", "RecordLinesInput",
                            {"task": tasks[kit], "lines": lines[start:start + BATCH]}, "firstSeq")

    began = time.perf_counter()
    await asyncio.gather(*(tree(kit) for own in kits.values() for kit in own))
    took = time.perf_counter() - began
    for own in kits.values():
        for kit in own:
            await kit.close()
    return len(lines) * len(tasks) / took


async def otlp_spans(base: str, tenants: list[str]) -> float:
    """Every tenant's exports sent at once, one client per tenant; spans/s."""
    async def tenant_exports(tenant: str) -> None:
        headers = {"Content-Type": "application/x-protobuf",
                   "Authorization": f"Bearer {issue_token('bench-kit', tenant, kit=True, key=ingest.SECRET)}"}
        bodies = [export(*estimate(new_trace_id())).SerializeToString() for _ in range(EXPORTS)]
        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            for body in bodies:
                response = await http.post("/v1/traces", content=body, headers=headers)
                if response.status_code != 200:
                    raise RuntimeError(f"OTLP export answered {response.status_code}: {response.text[:300]}")

    began = time.perf_counter()
    await asyncio.gather(*(tenant_exports(tenant) for tenant in tenants))
    return len(tenants) * EXPORTS * SPANS_PER_EXPORT / (time.perf_counter() - began)


@dataclass
class Run:
    lines_per_s: float
    spans_per_s: float
    lines_rows: dict[str, int]
    spans_rows: dict[str, int]
    tenants: dict[str, int]


@asynccontextmanager
async def served(url: str) -> AsyncIterator[str]:
    """`agentlog serve` with WORKERS processes on the database, once every process answers; its base URL."""
    with mock.patch.dict(os.environ, {"AGENTLOG_JWT_SECRET": ingest.SECRET}):
        server = start_server(url, "--workers", str(WORKERS))
    try:
        await ready(server)
        yield server.url
    finally:
        server.stop()


async def migrated(url: str) -> None:
    await db.open_database(url)
    await Tortoise.close_connections()


async def one_run(setup: Setup) -> Run:
    """Each part under a server of its own: a backend reports its counts when its session ends, so the counts
    are read once the server and its connections (and the coordinator's to the workers) are gone."""
    tenants = [f"bench-{uuid.uuid4().hex[:8]}" for _ in range(TENANTS)]
    before = await inserted(setup.nodes)
    async with served(setup.url) as base:
        lines = await record_lines(base, tenants)
    await asyncio.sleep(STATS_S)
    middle = await inserted(setup.nodes)
    async with served(setup.url) as base:
        await otlp_spans(base, [f"warm-{uuid.uuid4().hex[:8]}" for _ in range(WORKERS)])
        spans = await otlp_spans(base, tenants)
    await asyncio.sleep(STATS_S)
    after = await inserted(setup.nodes)
    return Run(lines, spans, {n: middle[n] - before[n] for n in before}, {n: after[n] - middle[n] for n in before},
               await tenants_by_node(setup, tenants))


TREE_TABLES = ("agent_task", "task_words", "trace_event", "llm_call", "checkpoint", "otlp_placed_span")


async def bytes_per_line(url: str) -> float:
    """What the tenants' trees take on disk (tables, indexes, TOAST) per line of their chains."""
    conn = await asyncpg.connect(url)
    try:
        size = await conn.fetchval("SELECT sum(pg_total_relation_size(t::regclass)) FROM unnest($1::text[]) t",
                                   list(TREE_TABLES))
        lines = await conn.fetchval("SELECT count(*) FROM trace_event")
    finally:
        await conn.close()
    return size / lines


async def measure(server: str) -> dict[str, list[Run]]:
    found: dict[str, list[Run]] = {}
    why_not = citus_ready()
    for name, workers in CONFIGURATIONS.items():
        if workers and why_not:
            say(f"citus: {name} skipped: {why_not}")
            continue
        async with configuration(workers, server) as setup:
            await migrated(setup.url)
            found[name] = []
            for n in range(1, RUNS + 1):
                say(f"citus ({n}/{RUNS}): {name}: {TENANTS} tenants, recordLines then OTLP…")
                run = await one_run(setup)
                say(f"citus ({n}/{RUNS}): {name}: {run.lines_per_s:,.0f} lines/s, {run.spans_per_s:,.0f} spans/s; "
                    f"rows inserted per node: lines {run.lines_rows}, spans {run.spans_rows}; "
                    f"tenants per worker: {run.tenants or '-'}")
                found[name].append(run)
            if not workers:
                say(f"citus: on one PostgreSQL the trees take {await bytes_per_line(setup.url):,.0f} bytes a line")
    return found


def figures(found: dict[str, list[Run]]) -> list[Figure]:
    rows = []
    plain = found.get("postgres")
    for name, runs in found.items():
        for unit, rate in (("lines/s", lambda r: r.lines_per_s), ("spans/s", lambda r: r.spans_per_s)):
            rates = [rate(run) for run in runs]
            base = statistics.median(rate(run) for run in plain) if plain else None
            target = f"reported; nodes share {os.cpu_count()} cores (range {min(rates):,.0f}-{max(rates):,.0f})"
            rows.append(Figure(f"citus_{name.replace(' ', '_')}_{unit.split('/')[0]}",
                               round(statistics.median(rates), 1), base and round(base, 1), unit, target, True))
    return rows


async def run(server: str = SERVER) -> list[Figure]:
    say(f"citus: {TENANTS} tenants writing at once, {WORKERS} server processes, on PostgreSQL and on clusters…")
    return figures(await measure(server))


if __name__ == "__main__":
    from bench.common import table

    print(table(asyncio.run(run())))
