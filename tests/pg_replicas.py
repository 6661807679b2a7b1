"""A streaming replica of a test's own PostgreSQL cluster (tests/pg_cluster.py), made with pg_basebackup -R."""

from __future__ import annotations

import os
import pwd
import tempfile
from pathlib import Path

import asyncpg

from tests.pg_cluster import BIN, Cluster, free_port


class Standby(Cluster):
    """A hot standby streaming from `primary`, on a free port of its own."""

    def __init__(self, primary: Cluster) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agentlog-standby-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self.port = free_port()
        self.owner = "postgres" if os.geteuid() == 0 else None
        if self.owner:
            entry = pwd.getpwnam(self.owner)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
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
