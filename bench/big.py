"""A large trace (`python -m bench --only big`): one agent trace of the peer shape, six levels of agents with
fan-out 4, sent by the OpenTelemetry SDK's OTLP/HTTP exporter in 512-span exports, children first as a running
agent ends them. Prints each export's latency at the first, middle and last exports, the spans/s until the whole
trace is readable, then what reading it costs (`bench/big_reads.py`: the root's first page of children, the
record paged to the end, the inspector's first paint and its waterfall's first bars, the export verified
offline), and the server's peak resident memory over the whole run.

AGENTLOG_BENCH_BIG_SPANS sets the trace's size (default 20,000; the issue's trace is 100,000).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import set_span_in_context

from bench import big_reads
from bench.common import TENANT, Figure
from bench.ingest import SECRET, server_process
from bench.otlp import TEXT
from permissions.tokens import issue_token

SPANS = int(os.environ.get("AGENTLOG_BENCH_BIG_SPANS", "20000"))
DEPTH, FAN_OUT, BATCH = 6, 4, 512
READ_RUNS = 3
GIVE_UP_S = 1800
ROOT = """{ tasks(filter: { rootsOnly: true, agent: "Estimator" }, first: 1) {
  edges { node { id chainLength subtreeCount } } } }"""
COST = """query($id: ID!) { task(id: $id) { cost { allInModelCalls } } }"""


def shape(spans: int) -> tuple[int, list[int], list[int]]:
    """Agents in six levels of fan-out 4, and each agent's model calls and tools: 72 of every 100 other spans are
    model calls, the rest tools."""
    agents = sum(FAN_OUT ** level for level in range(DEPTH))
    rest = spans - agents
    llm_total = rest * 72 // 100
    tool_total = rest - llm_total
    llms = [llm_total // agents + (1 if i < llm_total % agents else 0) for i in range(agents)]
    tools = [tool_total // agents + (1 if i < tool_total % agents else 0) for i in range(agents)]
    return agents, llms, tools


def make_spans(spans: int) -> list[ReadableSpan]:
    """The trace, ended children first."""
    kept = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "workshop"}))
    provider.add_span_processor(SimpleSpanProcessor(kept))
    tracer = provider.get_tracer("bench")
    agents, llms, tools = shape(spans)
    made = iter(range(agents))

    def run(level: int, context) -> None:
        index = next(made)
        name = "Estimator" if index == 0 else f"Helper{index % 7}"
        span = tracer.start_span(f"invoke_agent {name}", context=context, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "input.value": TEXT})
        inner = set_span_in_context(span)
        for _ in range(llms[index]):
            tracer.start_span("chat Everyday", context=inner, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "Everyday", "gen_ai.usage.input_tokens": 800,
                "gen_ai.usage.output_tokens": 60, "agentlog.cost_micros": 210, "gen_ai.output.messages": TEXT,
            }).end()
        for n in range(tools[index]):
            tracer.start_span("execute_tool PartsFor", context=inner, attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "PartsFor",
                "gen_ai.tool.call.id": f"c{index}-{n}", "gen_ai.tool.call.arguments": TEXT,
            }).end()
        if level + 1 < DEPTH:
            for _ in range(FAN_OUT):
                run(level + 1, inner)
        span.end()

    run(0, None)
    provider.shutdown()
    return list(kept.get_finished_spans())


def peak_rss_mb(pid: int) -> float:
    """The largest resident set the server's process, or any of its workers, has had."""
    pids = [pid] + [int(p) for p in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    peaks = []
    for one in pids:
        for line in open(f"/proc/{one}/status"):
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return max(peaks)


def send(base: str, spans: list[ReadableSpan]) -> dict:
    kit = issue_token("bench-kit", TENANT, kit=True, key=SECRET)
    exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers={"Authorization": f"Bearer {kit}"},
                                timeout=600)
    latencies = []
    llms = sum(1 for span in spans if span.name.startswith("chat"))
    lines = 2 * len(spans) - llms
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {kit}"}, timeout=600) as http:
        gc.collect()
        start = time.perf_counter()
        for at in range(0, len(spans), BATCH):
            began = time.perf_counter()
            if exporter.export(spans[at:at + BATCH]) != SpanExportResult.SUCCESS:
                raise RuntimeError("the exporter did not deliver a batch")
            latencies.append(time.perf_counter() - began)
        acknowledged = time.perf_counter() - start
        while True:
            edges = http.post("/graphql", json={"query": ROOT}).json()["data"]["tasks"]["edges"]
            if edges and edges[0]["node"]["chainLength"] == lines:
                root = edges[0]["node"]
                cost = http.post("/graphql", json={"query": COST, "variables": {"id": root["id"]}}).json()
                if cost["data"]["task"]["cost"]["allInModelCalls"] == llms:
                    break
            if time.perf_counter() - start > GIVE_UP_S:
                raise RuntimeError(f"the trace was not readable whole after {GIVE_UP_S} s")
            time.sleep(0.5)
        readable = time.perf_counter() - start
    exporter.shutdown()
    return {"latencies": latencies, "acknowledged_s": acknowledged, "readable_s": readable, "root": root}


async def figures(url: str) -> list[Figure]:
    spans = make_spans(SPANS)
    async with server_process(url) as (base, pid):
        found = send(base, spans)
        root = found["root"]
        read = await big_reads.measure(base, root["id"], root["chainLength"], FAN_OUT, READ_RUNS)
        peak = peak_rss_mb(pid)
    late = found["latencies"]
    middle = len(late) // 2
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    say(f"big: {len(spans):,} spans in {len(late)} exports of {BATCH}")
    say("big: export latency ms: first {:.0f}, second {:.0f}, middle {:.0f}, last-but-one {:.0f}, last {:.0f}; "
        "median {:.0f}, max of all but the last {:.0f}".format(
            *(1000 * late[i] for i in (0, 1, middle, -2, -1)), 1000 * statistics.median(late),
            1000 * max(late[:-1])))
    say(f"big: acknowledged at {len(spans) / found['acknowledged_s']:,.0f} spans/s, readable whole after "
        f"{found['readable_s']:.1f} s ({len(spans) / found['readable_s']:,.0f} spans/s); server peak RSS "
        f"{peak:,.0f} MB")
    lines = root["chainLength"]
    say(f"big: the root's first page of children: cold {read['children_cold_ms'][0]:.0f} ms, then "
        + big_reads.spread(read["children_ms"], "ms", 1))
    say(f"big: record(first: 5000) paged over {lines:,} lines: " + big_reads.spread(read["record_lines_per_s"], "lines/s"))
    say("big: the inspector's first paint of the root: " + big_reads.spread(read["first_paint_ms"], "ms"))
    say("big: the waterfall's first bars: " + big_reads.spread(read["first_bars_ms"], "ms"))
    say(f"big: GET /export then agentlog verify --file, {lines:,} lines: "
        + big_reads.spread(read["export_verify_lines_per_s"], "lines/s"))
    rate = len(spans) / found["readable_s"]
    children = statistics.median(read["children_ms"])
    record = statistics.median(read["record_lines_per_s"])
    paint = statistics.median(read["first_paint_ms"])
    bars = statistics.median(read["first_bars_ms"])
    export = statistics.median(read["export_verify_lines_per_s"])
    return [
        Figure("big_trace_ingest", round(rate, 3), None, "spans/s", ">= 5,000 spans/s", rate >= 5000),
        Figure("big_trace_children", round(children, 3), None, "ms", "< 100 ms", children < 100),
        Figure("big_trace_record", round(record, 3), None, "lines/s", ">= 50,000 lines/s", record >= 50_000),
        Figure("big_trace_first_paint", round(paint, 3), None, "ms", "< 2,000 ms", paint < 2000),
        Figure("big_trace_waterfall_first_bars", round(bars, 3), None, "ms", "< 2,000 ms", bars < 2000),
        Figure("big_trace_export_verify", round(export, 3), None, "lines/s", ">= 50,000 lines/s", export >= 50_000),
        Figure("big_trace_peak_rss", round(peak, 3), None, "MB", "< 500 MB", peak < 500),
    ]
