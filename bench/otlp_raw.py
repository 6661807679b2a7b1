"""The OTLP baseline served over HTTP: the plainest raw OTLP/HTTP receiver of the rows bench/otlp.py writes.

It is served as `agentlog serve` is (uvicorn in a process of its own, one worker, uvloop and httptools, no
access log, the collector settled by `settle_heap` once started) and takes the very exports the SDK's exporter
sends agentlog. Its one route parses the body into the ExportTraceServiceRequest agentlog parses, and answers
an empty ExportTraceServiceResponse once every trace in it is durable, each in a transaction of its own on a
warm asyncpg pool as big as agentlog's:

- an export without its trace's root span (the exporter sends children first, the root last) is kept as it
  came, one row of bytes, and its spans in memory;
- the export that brings the root writes the whole tree at once (`otlp.write_trace`: tasks, lines in time
  order from the root's STARTED line, meter rows, head, signed checkpoint) and deletes the kept rows.

A chain's first line is its root's and a line's task is hashed into it, so no line can be written before its
root is known: the kept bytes are the cheapest durable wait. What it does not do: take a span after its root
(a late span waits forever), take a span twice, stand-in tasks, folding of other spans, mapping beyond the
attributes the rows hold, prices, access, checks of the input or the token, reading back.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

import asyncpg
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bench.ingest_raw import POOL, kept_as_is
from bench.otlp import BATCH, Span, make_spans, root_of, write_trace
from bench.raw_server import raw_app, serve

PROTOBUF = "application/x-protobuf"
ANSWER = ExportTraceServiceResponse().SerializeToString()
KEPT_TABLE = (
    "CREATE TABLE IF NOT EXISTS otlp_raw_kept (trace_id bytea NOT NULL, body bytea NOT NULL)",
    "CREATE INDEX IF NOT EXISTS otlp_raw_kept_trace ON otlp_raw_kept (trace_id)",
)
KEEP = "INSERT INTO otlp_raw_kept (trace_id, body) VALUES ($1, $2)"
KEPT = "SELECT trace_id, body FROM otlp_raw_kept"
PLACED = "DELETE FROM otlp_raw_kept WHERE trace_id = $1"


def span_of(message: SpanMessage) -> Span:
    attributes = {}
    for kv in message.attributes:
        value = kv.value
        attributes[kv.key] = getattr(value, value.WhichOneof("value"))
    return Span(message.span_id, message.parent_span_id or None, message.name, message.start_time_unix_nano,
                message.end_time_unix_nano, attributes)


def by_trace(body: bytes) -> dict[bytes, list[Span]]:
    export = ExportTraceServiceRequest()
    export.ParseFromString(body)
    traces: dict[bytes, list[Span]] = defaultdict(list)
    for resource in export.resource_spans:
        for scope in resource.scope_spans:
            for message in scope.spans:
                traces[message.trace_id].append(span_of(message))
    return traces


class Receiver:
    """The spans of each trace kept until its root comes, in memory as well as stored; one worker only, whose
    lock per trace keeps its exports in order."""

    def __init__(self) -> None:
        self.kept: dict[bytes, list[Span]] = defaultdict(list)
        self.locks: dict[bytes, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def load(self, conn: asyncpg.Connection) -> None:
        for row in await conn.fetch(KEPT):
            self.kept[row["trace_id"]] += by_trace(row["body"])[row["trace_id"]]

    async def take(self, conn: asyncpg.Connection, body: bytes) -> None:
        for trace_id, spans in by_trace(body).items():
            async with self.locks[trace_id]:
                if any(span.parent_id is None for span in spans):
                    async with conn.transaction():
                        await write_trace(conn, root_of(trace_id), self.kept.get(trace_id, []) + spans)
                        await conn.execute(PLACED, trace_id)
                    self.kept.pop(trace_id, None)
                    self.locks.pop(trace_id)
                else:
                    await conn.execute(KEEP, trace_id, body)
                    self.kept[trace_id] += spans


def bodies(spans: list) -> list[bytes]:
    """The exports the SDK's exporter sends for `spans`, as bytes."""
    return [encode_spans(spans[at:at + BATCH]).SerializeToString() for at in range(0, len(spans), BATCH)]


async def warmed(url: str, receiver: Receiver) -> asyncpg.Pool:
    """The pool, every connection of it opened and its statements and types loaded by one trace taken."""
    pool = await asyncpg.create_pool(url, min_size=POOL, max_size=POOL, reset=kept_as_is)
    conns = [await pool.acquire() for _ in range(POOL)]
    try:
        for statement in KEPT_TABLE:
            await conns[0].execute(statement)
        await receiver.load(conns[0])
        for conn in conns:
            for body in bodies(make_spans()):
                await receiver.take(conn, body)
    finally:
        for conn in conns:
            await pool.release(conn)
    return pool


def app() -> Starlette:
    receiver = Receiver()

    async def traces(request: Request) -> Response:
        body = await request.body()
        async with request.app.state.pool.acquire() as conn:
            await receiver.take(conn, body)
        return Response(ANSWER, media_type=PROTOBUF)

    return raw_app(Route("/v1/traces", traces, methods=["POST"]), lambda url: warmed(url, receiver))


def main() -> None:
    serve("bench.otlp_raw", __doc__.splitlines()[0], "the spans waiting for their root are kept in the worker's memory")


COMMAND = ("bench.otlp_raw",)
"""How `bench.ingest.server_process` starts it."""

if __name__ == "__main__":
    main()
