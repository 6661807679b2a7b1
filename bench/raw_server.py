"""What the raw baselines served over HTTP share with each other and with `agentlog serve`: one route and a health
check on a warm asyncpg pool, the collector settled by `settle_heap` once started, and uvicorn run as agentlog runs
it, one worker only (each keeps what it counts in its own memory)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager

import asyncpg
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from graph.app import settle_heap
from models.settings import current
from models import db


def raw_app(route: Route, warmed: Callable[[str], Awaitable[asyncpg.Pool]]) -> Starlette:
    """`route` and /healthz; the pool `warmed` opens on the server's database is `app.state.pool`."""

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @asynccontextmanager
    async def lifespan(app: Starlette):
        app.state.pool = await warmed(db.database_url())
        settle_heap(current().gc_young)
        try:
            yield
        finally:
            await app.state.pool.close()

    return Starlette(routes=[route, Route("/healthz", healthz)], lifespan=lifespan)


def serve(module: str, description: str, one_worker_because: str) -> None:
    """`python -m module --host --port --workers 1`, the options `bench.ingest.server_process` passes."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.workers != 1:
        parser.error(f"one worker only: {one_worker_because}")
    uvicorn.run(f"{module}:app", factory=True, host=args.host, port=args.port, workers=args.workers,
                log_config=None, access_log=False)
