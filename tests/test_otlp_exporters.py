"""The OpenTelemetry SDK's own OTLP/HTTP exporter sending to a running `agentlog serve`."""

from __future__ import annotations

import base64
import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, set_span_in_context

from tests.frameworks import Workshop
from tests.servers import Server, start_server, subscribed

TREE = """
  id agent skill status requester { id } chainLength spentMicros modelCalls toolCalls inputTokens outputTokens
  subtree { id agent }
  calls { model costMicros costSource inputTokens }
"""
ROOTS = f"{{ tasks(filter: {{ rootsOnly: true }}, first: 50) {{ edges {{ node {{ {TREE} }} }} }} }}"


class Tenant(Workshop):
    """A workshop whose tests read its roots whole and trace with a provider of their own."""

    def roots(self) -> list[dict]:
        data = self.graphql(ROOTS)
        return [edge["node"] for edge in data["tasks"]["edges"]]

    def root_with(self, tasks: int, lines: int = 0) -> dict:
        """The one root, read again until its subtree holds `tasks` tasks and its chain `lines` lines, or a minute
        has passed: a trace larger than one placing pass is answered once its first pass is stored, and the other
        passes follow, the tasks in the first ones and the lines below them after."""
        deadline = time.monotonic() + 60
        while True:
            [task] = self.roots()
            if (len(task["subtree"]) >= tasks and task["chainLength"] >= lines) or time.monotonic() > deadline:
                return task
            time.sleep(0.1)

    @contextmanager
    def tracing(self, exporter) -> Iterator:
        provider = TracerProvider(resource=Resource.create({"service.name": "workshop", "tenant": "someone-else"}))
        provider.add_span_processor(
            BatchSpanProcessor(exporter, max_export_batch_size=512, max_queue_size=10_000, schedule_delay_millis=50)
            if isinstance(exporter, OTLPSpanExporter) else SimpleSpanProcessor(exporter)
        )
        try:
            yield provider.get_tracer("workshop")
        finally:
            provider.force_flush()
            provider.shutdown()


@pytest.fixture(scope="module")
def server(database) -> Iterator[Server]:
    started = start_server(database)
    try:
        yield started
    finally:
        started.stop()


def genai_estimate(tracer, calls: int = 1, tools: int = 1, helpers: int = 1, cost: int | None = None) -> None:
    with tracer.start_as_current_span("invoke_agent Estimator", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Estimator",
        "agentlog.skill": "EstimateRepair", "enduser.id": "mia", "gen_ai.usage.input_tokens": 99_999,
    }):
        for _ in range(calls):
            with tracer.start_as_current_span("chat Everyday", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "Everyday", "gen_ai.provider.name": "scripted",
                "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30,
                "gen_ai.input.messages": json.dumps([{"role": "user", "content": "T-7?"}]),
                **({"agentlog.cost_micros": cost} if cost is not None else {}),
            }):
                pass
        for i in range(tools):
            with tracer.start_as_current_span("execute_tool PartsFor", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "PartsFor", "gen_ai.tool.call.id": f"c{i}",
            }):
                pass
        for _ in range(helpers):
            with tracer.start_as_current_span("invoke_agent Stockist", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Stockist",
            }):
                with tracer.start_as_current_span("chat Everyday", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "Everyday",
                }):
                    pass


def test_genai_spans_from_the_sdk_exporter_become_a_work_tree(server):
    tenant = Tenant(server)

    with tenant.tracing(tenant.exporter()) as tracer:
        genai_estimate(tracer, cost=200)

    [task] = tenant.roots()
    assert (task["agent"], task["skill"], task["status"], task["requester"]) == (
        "Estimator", "EstimateRepair", "DONE", {"id": "mia"})
    assert task["modelCalls"] == 1 and task["toolCalls"] == 1 and task["inputTokens"] == 120
    assert task["spentMicros"] == 200 and [t["agent"] for t in task["subtree"]] == ["Stockist"]
    assert task["chainLength"] == 8
    check = tenant.graphql("query($id: ID!) { verifyTrace(task: $id) { intact lines } }", {"id": task["id"]})
    assert check["verifyTrace"] == {"intact": True, "lines": 8}


def test_an_openinference_trace_follows_the_same_path(server):
    tenant = Tenant(server)

    with tenant.tracing(tenant.exporter()) as tracer:
        with tracer.start_as_current_span("workflow", attributes={"openinference.span.kind": "CHAIN"}):
            with tracer.start_as_current_span("Estimator", attributes={
                "openinference.span.kind": "AGENT", "agent.name": "Estimator", "session.id": "s-1",
                "input.value": "Ticket T-7", "output.value": "One hour.",
            }):
                with tracer.start_as_current_span("retrieve", attributes={"openinference.span.kind": "RETRIEVER"}):
                    with tracer.start_as_current_span("llm", attributes={
                        "openinference.span.kind": "LLM", "llm.model_name": "Everyday", "llm.provider": "scripted",
                        "llm.token_count.prompt": 11, "llm.token_count.completion": 7,
                        "input.value": "T-7?", "output.value": "Pads.",
                    }):
                        pass
                with tracer.start_as_current_span("PartsFor", attributes={
                    "openinference.span.kind": "TOOL", "tool.name": "PartsFor",
                }) as failing:
                    failing.set_status(Status(StatusCode.ERROR, "no stock"))

    [task] = tenant.roots()
    assert (task["agent"], task["modelCalls"], task["toolCalls"], task["inputTokens"]) == ("Estimator", 1, 2, 11)
    lines = tenant.graphql("query($id: ID!) { task(id: $id) { given result record { kind tool isError payload } } }",
                           {"id": task["id"]})["task"]
    assert lines["given"] == "Ticket T-7" and lines["result"] == "One hour."
    assert [(line["kind"], line["tool"]) for line in lines["record"]] == [
        ("STARTED", None), ("TOOL_CALL", "retrieve"), ("MODEL_CALL", None), ("TOOL_RESULT", "retrieve"),
        ("TOOL_CALL", "PartsFor"), ("TOOL_RESULT", "PartsFor"), ("ENDED", None)]
    assert [line["isError"] for line in lines["record"] if line["kind"] == "TOOL_RESULT"] == [False, True]


def test_out_of_order_and_duplicated_batches_are_placed_once(server):
    tenant = Tenant(server)
    kept = InMemorySpanExporter()
    with tenant.tracing(kept) as tracer:
        genai_estimate(tracer, calls=3, tools=2, helpers=2)
    spans: list[ReadableSpan] = list(kept.get_finished_spans())
    exporter = tenant.exporter()

    newest_first = list(reversed(spans))
    for batch in (newest_first[4:], newest_first[:4], newest_first[2:6], spans):
        assert exporter.export(batch) == SpanExportResult.SUCCESS
    exporter.shutdown()

    [task] = tenant.roots()
    assert task["modelCalls"] == 3 and task["toolCalls"] == 2 and len(task["subtree"]) == 2
    assert task["chainLength"] == 2 + 3 + 4 + 2 * 3


def test_a_trace_of_5000_spans(server):
    tenant = Tenant(server)

    with tenant.tracing(tenant.exporter()) as tracer:
        genai_estimate(tracer, calls=2001, tools=1000, helpers=999)

    lines = 2 + 2001 + 2000 + 999 * 3
    task = tenant.root_with(999, lines)
    counts = tenant.graphql("query($id: ID!) { task(id: $id) { cost { allInModelCalls } } }", {"id": task["id"]})
    assert len(task["subtree"]) == 999 and counts["task"]["cost"] == {"allInModelCalls": 3000}
    assert task["chainLength"] == lines


def test_a_json_body_and_a_span_without_usage(server):
    tenant = Tenant(server)
    kept = InMemorySpanExporter()
    with tenant.tracing(kept) as tracer:
        with tracer.start_as_current_span("invoke_agent Estimator", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Estimator"}):
            with tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat",
                                                                  "gen_ai.request.model": "Everyday"}):
                pass
    document = json.loads(json_format.MessageToJson(encode_spans(kept.get_finished_spans())))
    for resource in document["resourceSpans"]:
        for span in resource["scopeSpans"][0]["spans"]:
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in span:
                    span[key] = base64.b64decode(span[key]).hex()

    response = httpx.post(f"{server.url}/v1/traces", json=document,
                          headers={"Authorization": f"Bearer {tenant.kit}"}, timeout=60)

    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    [task] = tenant.roots()
    assert task["calls"] == [{"model": "Everyday", "costMicros": 0, "costSource": "UNPRICED", "inputTokens": 0}]


def test_a_price_change_across_an_effective_date(server):
    tenant = Tenant(server)
    change = datetime.now(timezone.utc) - timedelta(hours=1)
    for since, rate in ((change - timedelta(days=30), 1_000_000), (change, 2_000_000)):
        tenant.graphql("mutation($i: ModelPriceInput!) { setModelPrice(input: $i) { model } }", {"i": {
            "model": "Everyday", "inputMicrosPerMillion": rate, "outputMicrosPerMillion": 0,
            "effectiveFrom": since.isoformat()}}, tenant.kit)
    before = int((change - timedelta(minutes=10)).timestamp() * 1e9)
    after = int((change + timedelta(minutes=10)).timestamp() * 1e9)

    with tenant.tracing(tenant.exporter()) as tracer:
        root = tracer.start_span("invoke_agent Estimator", start_time=before, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Estimator"})
        context = set_span_in_context(root)
        for at in (before, after):
            call = tracer.start_span("chat", context=context, start_time=at + 1000, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "Everyday",
                "gen_ai.usage.input_tokens": 1000})
            call.end(end_time=at + 2000)
        root.end(end_time=after + 5000)

    [task] = tenant.roots()
    assert [(c["costMicros"], c["costSource"]) for c in task["calls"]] == [(1000, "PRICE_TABLE"), (2000, "PRICE_TABLE")]


def test_acknowledged_spans_survive_a_sigkill_before_they_are_placed(database, monkeypatch):
    monkeypatch.setenv("AGENTLOG_OTLP_WAIT_S", "60")
    first = start_server(database)
    tenant = Tenant(first)
    kept = InMemorySpanExporter()
    with tenant.tracing(kept) as tracer:
        genai_estimate(tracer, calls=2, tools=1, helpers=1)
        with tracer.start_as_current_span("lost parent", attributes={"gen_ai.operation.name": "invoke_agent"}):
            with tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat",
                                                                  "gen_ai.request.model": "Orphaned"}):
                pass
    spans = list(kept.get_finished_spans())
    estimator_root = next(s for s in spans if s.name == "invoke_agent Estimator")
    lost_parent = next(s for s in spans if s.name == "lost parent")
    children = [s for s in spans if s not in (estimator_root, lost_parent)]

    exporter = tenant.exporter(first)
    assert exporter.export(children) == SpanExportResult.SUCCESS
    os.killpg(first.process.pid, signal.SIGKILL)
    first.process.wait(timeout=15)

    second = start_server(database)
    try:
        exporter = tenant.exporter(second)
        assert exporter.export([estimator_root]) == SpanExportResult.SUCCESS
        tenant.server = second
        [estimate] = tenant.roots()
        assert estimate["agent"] == "Estimator" and estimate["modelCalls"] == 2 and estimate["toolCalls"] == 1
    finally:
        second.stop()

    monkeypatch.setenv("AGENTLOG_OTLP_WAIT_S", "0.05")
    third = start_server(database)
    try:
        tenant.server = third
        deadline = time.monotonic() + 30
        while len(tenant.roots()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        stand_in = next(t for t in tenant.roots() if t["agent"] == "unknown")
        assert [c["model"] for c in stand_in["calls"]] == ["Orphaned"]
    finally:
        third.stop()


async def test_subscribers_hear_ingested_work_start_and_end(server):
    tenant = Tenant(server)

    async with subscribed(server, tenant.noor) as subscriber:
        with tenant.tracing(tenant.exporter()) as tracer:
            genai_estimate(tracer, helpers=1)
        [task] = tenant.roots()
        heard = await subscriber.events_until(task["id"])
        heard += await subscriber.events_until(task["id"])

    helper = task["subtree"][0]["id"]
    assert ("AgentTaskStarted", task["id"]) in heard and ("AgentTaskFinished", task["id"]) in heard
    assert ("AgentTaskStarted", helper) in heard


def test_hostile_bodies_sent_to_the_server_write_nothing(server):
    tenant = Tenant(server)
    kept = InMemorySpanExporter()
    with tenant.tracing(kept) as tracer:
        with tracer.start_as_current_span("invoke_agent Estimator", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ZZZZ", "input.value": "x" * 10_000_000}):
            pass
    huge = encode_spans(kept.get_finished_spans()).SerializeToString()
    bad_utf8 = huge.replace(b"ZZZZ", b"\xff\xfe\xfd\xfc")
    deep = ("[" * 200_000 + "]" * 200_000).encode()
    headers = {"Authorization": f"Bearer {tenant.kit}", "Content-Type": "application/x-protobuf"}

    answers = [
        httpx.post(f"{server.url}/v1/traces", content=huge, headers=headers, timeout=60),
        httpx.post(f"{server.url}/v1/traces", content=bad_utf8, headers=headers, timeout=60),
        httpx.post(f"{server.url}/v1/traces", content=deep, headers={**headers, "Content-Type": "application/json"},
                   timeout=60),
        httpx.post(f"{server.url}/v1/traces", content=b"\x1f\x8b" + b"\0" * 100, timeout=60,
                   headers={**headers, "Content-Encoding": "gzip"}),
    ]

    assert [a.status_code in (400, 413) for a in answers] == [True] * 4
    assert tenant.roots() == []
