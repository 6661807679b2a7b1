"""A primary of the test's own (tests/pg_cluster.py) holding an empty `agentlog` database, with hot standbys streaming
from it (pg_basebackup -R), and which node answered a server's reads. Used by the replica tests and bench/replicas.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import asyncpg
import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.pg_cluster import BIN, Cluster
from tests.servers import Server

DATABASE = "agentlog"


class Standby(Cluster):
    """A hot standby streaming from `primary` (through `via`, a port that leads to it, if given), on a free port of
    its own."""

    def __init__(self, primary: Cluster, via: int | None = None) -> None:
        self._make_home("agentlog-standby-")
        self._run(BIN / "pg_basebackup", "-D", self.data, "-h", "127.0.0.1", "-p", via or primary.port,
                  "-U", "postgres", "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")

    async def sql(self, statement: str, *arguments: object, database: str = "postgres") -> object:
        conn = await asyncpg.connect(f"{self.url}/{database}")
        try:
            return await conn.fetchval(statement, *arguments)
        finally:
            await conn.close()

    async def pause(self) -> None:
        await self.sql("SELECT pg_wal_replay_pause()")

    async def resume(self) -> None:
        await self.sql("SELECT pg_wal_replay_resume()")


@dataclass
class Nodes:
    primary: Cluster
    standbys: list[Standby]

    @property
    def url(self) -> str:
        return f"{self.primary.url}/{DATABASE}"

    def read_urls(self, count: int | None = None) -> str:
        """The value of AGENTLOG_READ_DATABASE_URLS naming the first `count` standbys (all by default)."""
        return ",".join(f"{standby.url}/{DATABASE}" for standby in self.standbys[:count])

    async def caught_up(self) -> None:
        """Until every standby has replayed what the primary has written so far."""
        conn = await asyncpg.connect(self.url)
        try:
            written = await conn.fetchval("SELECT pg_current_wal_lsn()::text")
        finally:
            await conn.close()
        for standby in self.standbys:
            while not await standby.sql("SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn", written):
                await asyncio.sleep(0.2)


async def with_database(primary: Cluster) -> None:
    """Starts `primary` and makes the empty `agentlog` database on it."""
    primary.start()
    admin = await asyncpg.connect(f"{primary.url}/postgres")
    try:
        await admin.execute(f"CREATE DATABASE {DATABASE}")
    finally:
        await admin.close()


@asynccontextmanager
async def primary_and_standbys(count: int) -> AsyncIterator[Nodes]:
    """A running primary with an empty `agentlog` database and `count` running standbys; all removed on leaving."""
    nodes = Nodes(Cluster(), [])
    try:
        await with_database(nodes.primary)
        for _ in range(count):
            nodes.standbys.append(Standby(nodes.primary))
            nodes.standbys[-1].start()
        yield nodes
    finally:
        for standby in nodes.standbys:
            standby.remove()
        nodes.primary.remove()


def reads_by_node(server: Server) -> dict[str, float]:
    """Reads each node has answered for `server`, by node name (`primary`, `replica0`, …), from its /metrics."""
    text = httpx.get(server.url + "/metrics", timeout=30).text
    return {
        sample.labels["node"]: sample.value
        for family in text_string_to_metric_families(text) if family.name == "agentlog_reads"
        for sample in family.samples if sample.name == "agentlog_reads_total"
    }
