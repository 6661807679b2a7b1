"""The ingest baseline served over HTTP: the same transactions as ingest_baseline.py, behind the plainest ASGI app.

It is served as `agentlog serve` is (uvicorn in a process of its own, as many workers, uvloop and httptools,
no access log, the collector settled by `settle_heap` once started) and takes the very requests the kits send
agentlog: the GraphQL document picks the write, orjson reads the body, the write runs on a warm asyncpg pool
as big as agentlog's, and the answer is the small JSON the kit reads. Nothing of GraphQL runs, the token is not
read and the input is not checked.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bench.ingest import SINGLE, document, steps
from bench.ingest_baseline import Tree, append, end, next_step, start
from bench.raw_server import raw_app, serve

POOL = 5
"""As many connections as agentlog's pool holds (tortoise's default for asyncpg)."""

Write = Callable[[asyncpg.Connection, dict[str, Any]], Awaitable[dict[str, Any]]]


class Writes:
    """The kit's writes as raw transactions; the meter's turns are counted here, per tree, in memory."""

    def __init__(self) -> None:
        self.turns: dict[uuid.UUID, int] = {}

    async def start_task(self, conn: asyncpg.Connection, given: dict[str, Any]) -> dict[str, Any]:
        task = await start(conn, given)
        self.turns[task] = 0
        return {"id": str(task)}

    async def record_lines(self, conn: asyncpg.Connection, given: dict[str, Any]) -> dict[str, Any]:
        task = uuid.UUID(given["task"])
        last, self.turns[task] = await append(conn, task, given["lines"], self.turns[task])
        return {"firstSeq": last - len(given["lines"]) + 1, "lastSeq": last}

    def record_one(self, kind: str) -> Write:
        async def write(conn: asyncpg.Connection, given: dict[str, Any]) -> dict[str, Any]:
            task = uuid.UUID(given["task"])
            last, self.turns[task] = await append(conn, task, [{kind: given}], self.turns[task])
            return {"seq": last}

        return write

    async def end_task(self, conn: asyncpg.Connection, given: dict[str, Any]) -> dict[str, Any]:
        task = uuid.UUID(given["task"])
        await end(conn, task, given)
        del self.turns[task]
        return {"id": given["task"]}

    def by_document(self) -> dict[str, tuple[str, Write]]:
        """Each document a kit sends, with the name its answer goes under and the write it asks for."""
        writes = {
            document("startTask", "StartTaskInput", "id"): ("startTask", self.start_task),
            document("recordLines", "RecordLinesInput", "firstSeq lastSeq"): ("recordLines", self.record_lines),
            document("endTask", "EndTaskInput", "id"): ("endTask", self.end_task),
        }
        for kind, (mutation, input_type) in SINGLE.items():
            writes[document(mutation, input_type, "seq")] = (mutation, self.record_one(kind))
        return writes


async def kept_as_is(conn: asyncpg.Connection) -> None:
    """No reset query when a connection goes back to the pool, as agentlog's pool does without one."""


async def warmed(url: str) -> asyncpg.Pool:
    """The pool, every connection of it opened and its statements and types loaded by a short tree written."""
    pool = await asyncpg.create_pool(url, min_size=POOL, max_size=POOL, reset=kept_as_is)
    conns = [await pool.acquire() for _ in range(POOL)]
    try:
        for conn in conns:
            tree = Tree(steps(0)[:61])
            for size in (1, 1, 60, 1):
                await next_step(conn, tree, size)
    finally:
        for conn in conns:
            await pool.release(conn)
    return pool


def app() -> Starlette:
    by_document = Writes().by_document()

    async def graphql(request: Request) -> Response:
        body = orjson.loads(await request.body())
        name, write = by_document[body["query"]]
        async with request.app.state.pool.acquire() as conn:
            answer = await write(conn, body["variables"]["input"])
        return Response(orjson.dumps({"data": {name: answer}}), media_type="application/json")

    return raw_app(Route("/graphql", graphql, methods=["POST"]), warmed)


def main() -> None:
    serve("bench.ingest_raw", __doc__.splitlines()[0], "each tree's meter turns are counted in the worker's memory")


COMMAND = ("bench.ingest_raw",)
"""How `bench.ingest.server_process` starts it."""

if __name__ == "__main__":
    main()
