"""The export's baseline: the best raw streaming HTTP service for the same work.

A plain Starlette route served by uvicorn in its own process, started as `agentlog serve` starts (one worker,
uvloop and httptools, no access log, the collector settled after startup; glibc's heap padded, see TOP_PAD): it
reads the chain's columns in the same 5,000-row keyset pages inside one read-only REPEATABLE READ transaction
on a warm asyncpg pool, the next page read while this one is encoded, and writes each line as the same JSON
object with orjson. It leaves out what only agentlog promises: the token, the access decision, and the check
that the root exists for the caller.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timezone

import asyncpg
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route

from bench.ingest import running
from models.record.chain import rfc3339
from resolvers.read.verify import BATCH, COLUMNS

PAGE = (f"SELECT {', '.join(COLUMNS)} FROM trace_event WHERE tenant = $1 AND root_id = $2 AND seq > $3 "
        "ORDER BY seq LIMIT $4")
HEAD = "SELECT tenant, chain_length, chain_head FROM agent_task WHERE id = $1"
SLICE = 1000
TOP_PAD = 64 << 20
"""glibc's heap kept 64 MB above its top: a small process's heap is otherwise grown and trimmed again for every
chunk of about 1 MB it joins and frees, which cost this service a third more CPU a line than agentlog's larger
heap, where the same chunks find room without it."""
NOTE = "SELECT note FROM checkpoint WHERE tenant = $1 AND root_id = $2"


def at(value: datetime | None) -> datetime | str | None:
    """orjson writes a UTC time with a fraction as the chain does; a whole second needs its six zeros."""
    return value if value is None or value.microsecond else rfc3339(value)


def line(v: asyncpg.Record) -> bytes:
    return orjson.dumps({
        "seq": v[0], "kind": v[1], "task": str(v[2]), "at": at(v[3]), "model": v[12], "routeRule": v[13],
        "attempts": v[14], "costMicros": v[15], "inputTokens": v[16], "outputTokens": v[17], "tool": v[18],
        "toolCallId": v[19], "isError": v[20], "durationMs": v[21],
        "summary": v[4], "summarySalt": v[6], "payload": v[5], "payloadSalt": v[7],
        "summaryHash": v[8], "payloadHash": v[9], "prevHash": v[10], "hash": v[11],
        "erasedAt": at(v[22]), "contentErasedAt": at(v[23]),
    }, option=orjson.OPT_UTC_Z)


async def lines(pool: asyncpg.Pool, root: str) -> AsyncIterator[bytes]:
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        tenant, length, head = await conn.fetchrow(HEAD, root)
        note = await conn.fetchval(NOTE, tenant, root)
        yield orjson.dumps({
            "format": "agentlog-export/v1", "root": root, "tenant": tenant, "chainLength": length, "chainHead": head,
            "checkpoint": note, "exportedAt": rfc3339(datetime.now(timezone.utc)),
        }) + b"\n"
        pending = asyncio.ensure_future(conn.fetch(PAGE, tenant, root, 0, BATCH))
        while pending is not None:
            rows = await pending
            pending = (asyncio.ensure_future(conn.fetch(PAGE, tenant, root, rows[-1][0], BATCH))
                       if len(rows) == BATCH else None)
            for start in range(0, len(rows), SLICE):
                yield b"\n".join([line(row) for row in rows[start:start + SLICE]]) + b"\n"
                await asyncio.sleep(0)


def app() -> Starlette:
    state: dict[str, asyncpg.Pool] = {}

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        from graph.app import settle_heap
        from models.settings import current

        async with asyncpg.create_pool(os.environ["AGENTLOG_DATABASE_URL"], min_size=2, max_size=2) as pool:
            async with pool.acquire() as conn:
                await conn.fetch(PAGE, "", "00000000-0000-0000-0000-000000000000", 0, 1)
            state["pool"] = pool
            settle_heap(current().gc_young)
            yield

    async def export(request: Request) -> StreamingResponse:
        return StreamingResponse(lines(state["pool"], request.path_params["root"]), media_type="application/jsonl")

    async def healthz(_: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    return Starlette(routes=[Route("/export/{root}", export), Route("/healthz", healthz)], lifespan=lifespan)


@asynccontextmanager
async def baseline_process(url: str) -> AsyncIterator[str]:
    """The baseline service on a free loopback port, stopped on leaving; yields its base URL."""
    def argv(port: int) -> list[str]:
        return [sys.executable, "-c", "import sys, uvicorn; uvicorn.run('bench.export_baseline:app', factory=True, "
                "host='127.0.0.1', port=int(sys.argv[1]), workers=1, log_config=None, access_log=False)", str(port)]

    env = {**os.environ, "AGENTLOG_DATABASE_URL": url, "MALLOC_TOP_PAD_": str(TOP_PAD)}
    async with running(argv, env, "the baseline") as (base, _):
        yield base
