"""Watching it run (SPEC 9.1): the 1,000-span trace of bench/otlp.py sent as 20 exports while its root runs (the
root's span comes in the last), with start markers (`agentlog_kit.otel.StartMarkers`, each sent in the export
of the moment its span started) and without. For each export, the time from its answer until every span it
carried is readable, placed in the record or waiting as provisional work (`otlp_placed_span` or `otlp_span`, both
committed in the transaction the export's first pass commits before answering, the rest by the passes just after):
p50, p99 and max over the exports. And the ingest throughput, real spans a second from the first export until the
whole trace is placed (the passes after the last answer included), with markers against without: sent by one
exporter, which waits for each answer (each export's placing) before its next, and by STREAMS exporters at once,
each with a trace of its own, which is what the server can take."""

from __future__ import annotations

import asyncio
import statistics
import time

import asyncpg
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentlog_kit.otel import StartMarkers
from bench import ingest, otlp
from bench.common import TENANT, Figure, higher_is_better, informational, lower_is_better

EXPORTS = 20
STREAMS = 4
REPEATS = 3
PLACED = ("SELECT (SELECT COUNT(*) FROM otlp_placed_span WHERE tenant=$1 AND trace_id=$2 AND kind<>'other') - "
          "(SELECT COUNT(*) FROM otlp_span WHERE tenant=$1 AND trace_id=$2)")
READABLE = ('SELECT (SELECT COUNT(*) FROM otlp_span WHERE tenant=$1 AND trace_id=$2 AND span_id=ANY($3)) + '
            "(SELECT COUNT(*) FROM otlp_placed_span WHERE tenant=$1 AND trace_id=$2 AND span_id=ANY($3))")
GIVE_UP_S = 60


def trace_with_markers() -> tuple[list[ReadableSpan], list[ReadableSpan]]:
    """bench/otlp.py's trace, and the markers StartMarkers sends for it, each in the order made."""
    markers = InMemorySpanExporter()
    made = otlp.make_spans(StartMarkers(markers, delay_ms=1))
    return made, list(markers.get_finished_spans())


def exports(spans: list[ReadableSpan], markers: list[ReadableSpan]) -> list[list[ReadableSpan]]:
    """The spans in the order they ended, cut in EXPORTS; each export also carries the markers of the spans that
    started before its last span ended and were not sent yet, first."""
    size = -(-len(spans) // EXPORTS)
    left = sorted(markers, key=lambda m: m.start_time)
    cut = []
    for at in range(0, len(spans), size):
        part = spans[at:at + size]
        until = part[-1].end_time
        due = [m for m in left if m.start_time <= until]
        left = left[len(due):]
        cut.append(due + part)
    cut[-1] = left + cut[-1]
    return cut


def _id(span: ReadableSpan) -> str:
    return format(span.context.span_id, "016x")


async def placed_whole(conn: asyncpg.Connection, trace_id: str, spans: int, start: float) -> None:
    """Until the trace's `spans` real spans are all placed, or GIVE_UP_S after `start`."""
    while await conn.fetchval(PLACED, TENANT, trace_id) < spans:
        if time.perf_counter() - start > GIVE_UP_S:
            raise RuntimeError("the trace was not placed whole")
        await asyncio.sleep(0.002)


async def one_run(base: str, url: str, marked: bool) -> tuple[list[float], float]:
    """Per export, seconds from its answer until its spans are readable; and real spans a second until the whole
    trace is placed."""
    spans, markers = trace_with_markers()
    cut = exports(spans, markers if marked else [])
    trace_id = format(spans[0].context.trace_id, "032x")
    sender = otlp.exporter(base)
    conn = await asyncpg.connect(url)
    latencies = []
    try:
        start = time.perf_counter()
        for part in cut:
            ids = sorted({_id(s) for s in part if s.attributes.get("logfire.span_type") != "pending_span"})
            if await asyncio.to_thread(sender.export, part) != SpanExportResult.SUCCESS:
                raise RuntimeError("the exporter did not deliver an export")
            answered = time.perf_counter()
            while await conn.fetchval(READABLE, TENANT, trace_id, ids) < len(ids):
                if time.perf_counter() - answered > GIVE_UP_S:
                    raise RuntimeError("an export's spans were not readable")
                await asyncio.sleep(0.002)
            latencies.append(time.perf_counter() - answered)
        await placed_whole(conn, trace_id, len(spans), start)
        whole = time.perf_counter() - start
    finally:
        await conn.close()
        sender.shutdown()
    return latencies, len(spans) / whole


async def streams_run(base: str, url: str, marked: bool) -> float:
    """STREAMS traces sent at once, each by an exporter of its own sending its next export as soon as the last is
    answered: real spans a second until every trace is placed whole, the server's capacity rather than one
    exporter's pace (which waits for each export's placing in turn)."""
    made = [trace_with_markers() for _ in range(STREAMS)]
    cuts = [exports(spans, markers if marked else []) for spans, markers in made]
    trace_ids = [format(spans[0].context.trace_id, "032x") for spans, _ in made]
    senders = [otlp.exporter(base) for _ in range(STREAMS)]

    def send(sender, cut: list[list[ReadableSpan]]) -> None:
        for part in cut:
            if sender.export(part) != SpanExportResult.SUCCESS:
                raise RuntimeError("the exporter did not deliver an export")

    conn = await asyncpg.connect(url)
    try:
        start = time.perf_counter()
        await asyncio.gather(*(asyncio.to_thread(send, sender, cut) for sender, cut in zip(senders, cuts)))
        for (spans, _), trace_id in zip(made, trace_ids):
            await placed_whole(conn, trace_id, len(spans), start)
        whole = time.perf_counter() - start
    finally:
        await conn.close()
        for sender in senders:
            sender.shutdown()
    return sum(len(spans) for spans, _ in made) / whole


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def figures(url: str) -> list[Figure]:
    async with ingest.served(url) as base:
        await one_run(base, url, False)
        found: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
        for _ in range(REPEATS):
            for marked in (False, True):
                latencies, rate = await one_run(base, url, marked)
                found[marked][0].extend(latencies)
                found[marked][1].append(rate)
        at_once: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(REPEATS):
            for marked in (False, True):
                at_once[marked].append(await streams_run(base, url, marked))
    result = []
    for marked, name in ((True, "with_markers"), (False, "without_markers")):
        latencies, rates = found[marked]
        ms = [s * 1000 for s in latencies]
        result += [
            lower_is_better(f"live_readable_p50_{name}", quantile(ms, 0.5), 1000, "ms", 1),
            lower_is_better(f"live_readable_p99_{name}", quantile(ms, 0.99), 1000, "ms", 1),
            informational(f"live_readable_max_{name}", max(ms), 1000, "ms"),
        ]
    with_rate, without_rate = statistics.median(found[True][1]), statistics.median(found[False][1])
    result.append(higher_is_better("live_ingest_with_markers", with_rate, without_rate, "spans/s", 0.9, True))
    with_rate, without_rate = statistics.median(at_once[True]), statistics.median(at_once[False])
    result.append(higher_is_better(f"live_ingest_{STREAMS}_at_once_with_markers", with_rate, without_rate, "spans/s",
                                   0.9, True))
    return result
