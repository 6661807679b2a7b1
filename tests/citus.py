"""A fresh test database on a Citus coordinator, when AGENTLOG_TEST_CITUS_WORKERS names the workers
(`127.0.0.1:PORT,127.0.0.1:PORT`) of the cluster AGENTLOG_TEST_DATABASE_URL points at.

The extension and the node list belong to one database, and a database holding the extension cannot be a
template (Citus's maintenance daemon stays connected to it). So the database is made empty (the coordinator
propagates CREATE DATABASE to the workers), the extension is created in it on every node, and the nodes are
joined in it. Without the variable nothing here runs."""

from __future__ import annotations

import asyncio
import os

import asyncpg


def workers() -> list[tuple[str, int]]:
    listed = os.environ.get("AGENTLOG_TEST_CITUS_WORKERS", "").strip()
    nodes = []
    for node in filter(None, (part.strip() for part in listed.split(","))):
        host, _, port = node.rpartition(":")
        nodes.append((host, int(port)))
    return nodes


def _on(url: str, database: str) -> str:
    return f"{url.rpartition('/')[0]}/{database}"


def _worker_url(url: str, host: str, port: int, database: str) -> str:
    credentials = url.split("://", 1)[1].rpartition("@")[0]
    return f"postgres://{credentials + '@' if credentials else ''}{host}:{port}/{database}"


async def _run(url: str, *statements: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def create(url: str, nodes: list[tuple[str, int]] | None = None) -> None:
    """Makes the database `url` names on the coordinator, with the extension on every node and the workers
    (`nodes`, by default those of AGENTLOG_TEST_CITUS_WORKERS) joined."""
    nodes = workers() if nodes is None else nodes
    name = url.rpartition("/")[2]
    await _run(_on(url, "postgres"), f'CREATE DATABASE "{name}"')
    await _run(url, "CREATE EXTENSION citus")
    for host, port in nodes:
        await _run(_worker_url(url, host, port, name), "CREATE EXTENSION citus")
    coordinator = url.split("://", 1)[1].rpartition("@")[2].split("/", 1)[0]
    host, _, port = coordinator.rpartition(":")
    await _run(url, f"SELECT citus_set_coordinator_host('{host}', {int(port or 5432)})",
               *(f"SELECT citus_add_node('{host}', {port})" for host, port in nodes))


def worker_url(url: str, host: str, port: int) -> str:
    """The URL of the same database on a worker."""
    return _worker_url(url, host, port, url.rpartition("/")[2])


async def drop(url: str) -> None:
    """Drops the database on the coordinator (and so on the workers), whoever is still connected to it. The
    coordinator's connections to a worker's copy close a moment after its own sessions end: a refusal for
    those is tried again."""
    name = url.rpartition("/")[2]
    for attempt in range(20):
        try:
            await _run(_on(url, "postgres"), f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        except asyncpg.ObjectInUseError:
            if attempt == 19:
                raise
            await asyncio.sleep(0.5)
