"""A streaming replica of a test's own PostgreSQL cluster (tests/pg_cluster.py), made with pg_basebackup -R."""

from __future__ import annotations

import asyncpg

from tests.pg_cluster import BIN, Cluster


class Standby(Cluster):
    """A hot standby streaming from `primary`, on a free port of its own."""

    def __init__(self, primary: Cluster) -> None:
        self._make_home("agentlog-standby-")
        self._run(BIN / "pg_basebackup", "-D", self.data, "-h", "127.0.0.1", "-p", primary.port, "-U", "postgres",
                  "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")

    async def sql(self, statement: str, database: str = "postgres") -> object:
        conn = await asyncpg.connect(f"{self.url}/{database}")
        try:
            return await conn.fetchval(statement)
        finally:
            await conn.close()

    async def pause(self) -> None:
        await self.sql("SELECT pg_wal_replay_pause()")

    async def resume(self) -> None:
        await self.sql("SELECT pg_wal_replay_resume()")
