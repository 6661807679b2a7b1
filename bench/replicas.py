"""Tree reads per second with the primary alone, then with one and two streaming replicas, under concurrent readers.

    python -m bench --only replicas        (or: python -m bench.replicas)

A primary and two hot standbys of the bench's own are made with initdb and pg_basebackup on free ports; one tree
of TASKS tasks (bench/tree_read.py's shape) is stored, and for each configuration a fresh `agentlog serve` with
WORKERS processes answers READERS clients that each read the whole tree in a loop for SECONDS. The three
configurations take turns, RUNS times; the median and the range are reported, with the share of reads each node
answered (from /metrics).

Every node, every server process and every reader share this one machine's cores, so a replica adds no CPU: what
the figures show is what routing costs and whether spreading reads over more PostgreSQL processes helps on the
same cores, not how reads scale on separate hosts.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from unittest import mock

import httpx

from bench.common import Figure
from bench.tree_read import TENANT, fake_tree, nested_query, store
from permissions.tokens import issue_token
from tests.pg_replicas import Nodes, primary_and_standbys, reads_by_node
from tests.servers import Server, start_server

TASKS = 100
READERS = 16
WORKERS = 2
SECONDS = 8.0
RUNS = 3
CONFIGURATIONS = {"primary alone": 0, "1 replica": 1, "2 replicas": 2}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def readers(server: Server, root: str, seconds: float) -> int:
    token = issue_token("mia", TENANT, roles=["Mechanic"], name="Mia")
    body = {"query": nested_query(), "variables": {"id": root}}
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + seconds
    done = 0

    async def reader(http: httpx.AsyncClient) -> None:
        nonlocal done
        while time.monotonic() < deadline:
            response = await http.post("/graphql", json=body, headers=headers)
            answer = response.json()
            assert response.status_code == 200 and not answer.get("errors") and answer["data"]["task"], answer
            done += 1

    limits = httpx.Limits(max_connections=READERS)
    async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as http:
        await asyncio.gather(*(reader(http) for _ in range(READERS)))
    return done


async def ready(server: Server, within_s: float = 120) -> None:
    """Until every worker can answer (they start after the port is announced)."""
    deadline = time.monotonic() + within_s
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        answered = 0
        while answered < 4 * WORKERS:
            try:
                answered = answered + 1 if (await http.get("/readyz")).status_code == 200 else 0
            except httpx.TransportError:
                answered = 0
            if time.monotonic() > deadline:
                raise RuntimeError("agentlog serve did not become ready:\n" + "\n".join(server.log[-30:]))
            await asyncio.sleep(0.25)


async def one_run(nodes: Nodes, replicas: int, root: str) -> tuple[float, dict]:
    settings = {"AGENTLOG_READ_DATABASE_URLS": nodes.read_urls(replicas)} if replicas else {}
    with mock.patch.dict(os.environ, settings):
        server = start_server(nodes.url, "--workers", str(WORKERS))
    try:
        await ready(server)
        await readers(server, root, 1.0)
        reads = await readers(server, root, SECONDS)
        return reads / SECONDS, reads_by_node(server)
    finally:
        server.stop()


async def measure() -> dict[str, list[tuple[float, dict]]]:
    async with primary_and_standbys(2) as nodes:
        start_server(nodes.url).stop()
        tree = fake_tree(TASKS)
        await store(nodes.url, tree)
        await nodes.caught_up()
        found: dict[str, list[tuple[float, dict]]] = {name: [] for name in CONFIGURATIONS}
        for run in range(1, RUNS + 1):
            for name, count in CONFIGURATIONS.items():
                say(f"replicas ({run}/{RUNS}): {name}, {READERS} readers for {SECONDS:.0f} s…")
                per_second, nodes_read = await one_run(nodes, count, str(tree.root))
                say(f"replicas ({run}/{RUNS}): {name}: {per_second:,.1f} tree reads/s, answered by "
                    f"{nodes_read or 'primary'}")
                found[name].append((per_second, nodes_read))
        return found


def figures(found: dict[str, list[tuple[float, dict]]]) -> list[Figure]:
    alone = statistics.median(rate for rate, _ in found["primary alone"])
    rows = []
    for name, count in CONFIGURATIONS.items():
        rates = [rate for rate, _ in found[name]]
        by_replica = sum(n for _, nodes in found[name] for node, n in nodes.items() if node != "primary")
        target = f"reported; nodes share {os.cpu_count()} cores (range {min(rates):,.1f}-{max(rates):,.1f})"
        rows.append(Figure(f"replicas_{count}", round(statistics.median(rates), 1), round(alone, 1), "tree reads/s",
                           target, by_replica > 0 if count else True))
    return rows


async def run() -> list[Figure]:
    say(f"replicas: a primary and two standbys of our own, a tree of {TASKS} tasks, {WORKERS} server processes…")
    return figures(await measure())


if __name__ == "__main__":
    from bench.common import table

    print(table(asyncio.run(run())))
