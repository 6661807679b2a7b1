"""Several server processes started at once on one fresh database all come up, and share it."""

import asyncio
import tempfile
import uuid
from pathlib import Path

import asyncpg
import httpx

from permissions.tokens import issue_token
from tests.servers import start_server


async def empty_database(test_url: str) -> tuple[str, str | None]:
    if not test_url.startswith("postgres"):
        return f"sqlite://{Path(tempfile.mkdtemp()) / 'fresh.db'}", None
    server = test_url.rsplit("/", 1)[0]
    name = f"agentlog_start_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"{server}/postgres")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return f"{server}/{name}", name


async def drop(test_url: str, name: str | None) -> None:
    if name is None:
        return
    admin = await asyncpg.connect(f"{test_url.rsplit('/', 1)[0]}/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def test_two_processes_starting_at_once_migrate_once_and_both_serve(database):
    url, name = await empty_database(database)
    started = await asyncio.gather(*(asyncio.to_thread(start_server, url) for _ in range(2)), return_exceptions=True)
    servers = [s for s in started if not isinstance(s, BaseException)]
    try:
        failed = [s for s in started if isinstance(s, BaseException)]
        assert not failed, failed
        kit = issue_token("kit", "shop", kit=True)
        async with httpx.AsyncClient(timeout=30) as http:
            for server in servers:
                assert (await http.get(f"{server.url}/healthz")).json() == {"status": "ok"}
            written = await http.post(
                f"{servers[0].url}/graphql", headers={"Authorization": f"Bearer {kit}"},
                json={"query": 'mutation { registerAgent(input: {name: "Estimator"}) { name } }'},
            )
            read = await http.post(
                f"{servers[1].url}/graphql", headers={"Authorization": f"Bearer {kit}"},
                json={"query": 'mutation { registerAgent(input: {name: "Estimator", purpose: "Estimates."}) { name purpose } }'},
            )
        assert written.json() == {"data": {"registerAgent": {"name": "Estimator"}}}
        assert read.json() == {"data": {"registerAgent": {"name": "Estimator", "purpose": "Estimates."}}}
    finally:
        for server in servers:
            server.stop()
        await drop(database, name)
