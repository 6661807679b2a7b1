"""OTLP ingest: one 1,000-span trace sent by the OpenTelemetry SDK's OTLP/HTTP exporter in 512-span batches,
timed until all of it is readable through GraphQL; the baseline takes the same exports over HTTP
(bench/otlp_raw.py) and writes the rows `write_trace` writes, which are also written from the spans in memory.

The shape is the peer benchmark's: depth 5, fan-out 4, 188 agent spans, 562 LLM spans and 250 tool spans,
300-byte inputs and outputs. The spans are made first (in memory, in the order they end, as a running agent
ends them); the clock runs from the first export to the GraphQL answer that holds every span. Making the
spans leaves this process garbage in cycles; it is collected before either clock starts, so that neither
side pays a full collection of the other's leftovers.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import asyncpg
import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import set_span_in_context

from bench.common import TENANT, raw_commit, raw_fixed, raw_line_hash
from bench.ingest import SECRET
from models.record.chain import GENESIS, compact_json
from permissions.tokens import issue_token
from resolvers.write import sentences
from resolvers.write.checkpoints import KEEP, note_for

AGENTS, LLMS, TOOLS, DEPTH, FAN_OUT = 188, 562, 250, 5, 4
SPANS = AGENTS + LLMS + TOOLS
BATCH = 512
CHUNK = 250
GIVE_UP_S = 120
TEXT = ("The rear brake does not bite; the pads are worn to the metal and the cable is frayed near the lever. " * 4)[:300]
WHOLE = """{ tasks(filter: { rootsOnly: true, agent: "Estimator" }, first: 1) {
  edges { node { id chainLength subtree { id } cost { allInModelCalls } } } } }"""
LINES = AGENTS * 2 + LLMS + TOOLS * 2
ROOTS = "{ tasks(filter: { rootsOnly: true, agent: \"Estimator\" }, first: 1) { edges { node { id } } } }"


def agent_tree() -> list[int | None]:
    """Each agent's parent index, breadth first: 1 + 4 + 16 + 64 + 103 = 188 agents, five levels deep."""
    parents: list[int | None] = [None]
    level = [0]
    while len(parents) < AGENTS:
        below = []
        for parent in level:
            for _ in range(FAN_OUT):
                if len(parents) == AGENTS:
                    break
                parents.append(parent)
                below.append(len(parents) - 1)
        level = below
    return parents


def make_spans(*beside: SpanProcessor) -> list[ReadableSpan]:
    """The trace, ended children first, as a framework ends it; `beside` are more processors the spans go through."""
    kept = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "workshop"}))
    provider.add_span_processor(SimpleSpanProcessor(kept))
    for processor in beside:
        provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench")
    parents = agent_tree()
    children: dict[int, list[int]] = {}
    for index, parent in enumerate(parents):
        if parent is not None:
            children.setdefault(parent, []).append(index)
    llms = [LLMS // AGENTS + (1 if i < LLMS % AGENTS else 0) for i in range(AGENTS)]
    tools = [TOOLS // AGENTS + (1 if i < TOOLS % AGENTS else 0) for i in range(AGENTS)]

    def run(index: int, context) -> None:
        name = "Estimator" if index == 0 else f"Helper{index % 7}"
        span = tracer.start_span(f"invoke_agent {name}", context=context, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "enduser.id": "mia",
            "input.value": TEXT, "output.value": TEXT,
        })
        inner = set_span_in_context(span)
        for n in range(llms[index]):
            tracer.start_span("chat Everyday", context=inner, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "Everyday", "gen_ai.provider.name": "scripted",
                "gen_ai.usage.input_tokens": 800, "gen_ai.usage.output_tokens": 60, "agentlog.cost_micros": 210,
                "gen_ai.input.messages": TEXT, "gen_ai.output.messages": TEXT,
            }).end()
        for n in range(tools[index]):
            tracer.start_span("execute_tool PartsFor", context=inner, attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "PartsFor",
                "gen_ai.tool.call.id": f"c{index}-{n}", "gen_ai.tool.call.arguments": TEXT,
                "gen_ai.tool.call.result": TEXT,
            }).end()
        for child in children.get(index, []):
            run(child, inner)
        span.end()

    run(0, None)
    provider.shutdown()
    spans = list(kept.get_finished_spans())
    assert len(spans) == SPANS
    return spans


def kit_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token('bench-kit', TENANT, kit=True, key=SECRET)}"}


def exporter(base: str) -> OTLPSpanExporter:
    return OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers=kit_headers(), timeout=120)


def send(sender: OTLPSpanExporter, spans: list[ReadableSpan]) -> None:
    for at in range(0, len(spans), BATCH):
        if sender.export(spans[at:at + BATCH]) != SpanExportResult.SUCCESS:
            raise RuntimeError("the exporter did not deliver a batch")


def ingest(base: str, spans: list[ReadableSpan]) -> tuple[float, str]:
    """Seconds from the first export to the GraphQL answer that holds the whole trace (every task under the root,
    every model call in its cost, every line in its chain), and the root's id."""
    sender = exporter(base)
    with httpx.Client(base_url=base, headers=kit_headers(), timeout=120) as http:
        known = {edge["node"]["id"] for edge in _graphql(http, ROOTS)["tasks"]["edges"]}
        gc.collect()
        start = time.perf_counter()
        send(sender, spans)
        while (root := _whole(http, known)) is None:
            if time.perf_counter() - start > GIVE_UP_S:
                raise RuntimeError(f"the trace was not readable whole after {GIVE_UP_S} s")
        seconds = time.perf_counter() - start
    sender.shutdown()
    return seconds, root


def exported(base: str, spans: list[ReadableSpan]) -> float:
    """Seconds from the first export until the last is answered: the raw receiver answers once its rows are
    committed."""
    sender = exporter(base)
    gc.collect()
    start = time.perf_counter()
    send(sender, spans)
    seconds = time.perf_counter() - start
    sender.shutdown()
    return seconds


def _whole(http: httpx.Client, known: set[str]) -> str | None:
    """The newest root's id, once it, read with its subtree and cost in one request as a frontend reads a tree,
    is the trace just sent, whole."""
    edges = _graphql(http, WHOLE)["tasks"]["edges"]
    if not edges or edges[0]["node"]["id"] in known:
        return None
    task = edges[0]["node"]
    whole = (len(task["subtree"]) == AGENTS - 1 and task["cost"]["allInModelCalls"] == LLMS
             and task["chainLength"] == LINES)
    return task["id"] if whole else None


def _graphql(http: httpx.Client, query: str, variables: dict | None = None) -> dict:
    body = http.post("/graphql", json={"query": query, "variables": variables or {}}).json()
    if body.get("errors"):
        raise RuntimeError(body["errors"])
    return body["data"]


TASK_COLUMNS = (
    "id", "tenant", "agent", "skill", "cause", "given", "requester_id", "actor_id", "status", "result", "started_at",
    "ended_at", "parent_id", "root_id", "depth", "sequence", "path", "chain_length", "chain_head",
)
LINE_COLUMNS = (
    "tenant", "root_id", "seq", "kind", "task_id", "at", "summary", "payload", "model", "attempts", "cost_micros",
    "call_id", "tool", "tool_call_id", "input_tokens", "output_tokens", "duration_ms", "is_error", "summary_salt",
    "payload_salt", "summary_hash", "payload_hash", "prev_hash", "hash",
)
CALL_COLUMNS = (
    "id", "tenant", "task_id", "task_path", "turn", "agent", "model", "provider", "attempts", "input_tokens",
    "output_tokens", "cost_micros", "duration_ms", "at",
)


@dataclass(frozen=True, slots=True)
class Span:
    """What the baselines' rows need of a span, whether the SDK made it or an export carried it."""

    span_id: bytes | int
    parent_id: bytes | int | None
    name: str
    start: int
    end: int
    attributes: Mapping[str, Any]


def sdk_span(span: ReadableSpan) -> Span:
    return Span(span.context.span_id, span.parent.span_id if span.parent else None, span.name, span.start_time,
                span.end_time, span.attributes)


def root_of(trace_id: bytes | int) -> uuid.UUID:
    """A trace's root task id, its 128-bit trace id: the baselines make one tree of one trace, once."""
    return uuid.UUID(bytes=trace_id) if isinstance(trace_id, bytes) else uuid.UUID(int=trace_id)


def _time(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc)


async def baseline(conn: asyncpg.Connection, spans: list[ReadableSpan]) -> float:
    """The trace's rows written by `write_trace` in one transaction from the same spans in memory: no export, no
    HTTP, no parsing. The connection is open and its types loaded (`warm`) before the clock starts, as a
    server's pooled connections are."""
    root, given = root_of(spans[0].context.trace_id), [sdk_span(s) for s in spans]
    gc.collect()
    start = time.perf_counter()
    async with conn.transaction():
        await write_trace(conn, root, given)
    return time.perf_counter() - start


async def write_trace(conn: asyncpg.Connection, root: uuid.UUID, spans: list[Span]) -> None:
    """The whole trace's tasks, lines (in time order, the root's STARTED first), meter rows, head and signed
    checkpoint, hashed with hashlib and written with COPY inside the caller's transaction; no mapping beyond the
    attributes the rows hold, no waiting, access or reading back."""
    async with InOrder() as writes:
        tasks: dict[bytes | int, tuple] = {}
        counts: dict[uuid.UUID, int] = {}
        ordered = sorted((s for s in spans if s.attributes["gen_ai.operation.name"] == "invoke_agent"),
                         key=lambda s: s.start)
        task_rows, lines, calls, turns = [], [], [], {}
        for s in ordered:
            a = s.attributes
            parent = tasks.get(s.parent_id) if s.parent_id else None
            tid = root if parent is None else uuid.uuid4()
            path = str(tid) if parent is None else f"{parent[1]}/{tid}"
            depth = 0 if parent is None else parent[2] + 1
            counts[parent[0] if parent else tid] = counts.get(parent[0] if parent else tid, 0) + 1
            tasks[s.span_id] = (tid, path, depth, a["gen_ai.agent.name"], a["enduser.id"])
            task_rows.append((
                tid, TENANT, a["gen_ai.agent.name"], s.name, "SPAWN" if parent else "REQUEST", a["input.value"],
                a["enduser.id"], a["gen_ai.agent.name"], "DONE", a["output.value"], _time(s.start), _time(s.end),
                parent[0] if parent else None, root, depth, counts[parent[0] if parent else tid], path, 0, GENESIS,
            ))
        writes.send(conn.copy_records_to_table, "agent_task", records=task_rows, columns=TASK_COLUMNS)
        events = []
        for s in spans:
            kind = s.attributes["gen_ai.operation.name"]
            if kind == "invoke_agent":
                events += [(s.start, 0, "STARTED", s), (s.end, 3, "ENDED", s)]
            elif kind == "chat":
                events.append((s.end, 1, "MODEL_CALL", s))
            else:
                events += [(s.start, 1, "TOOL_CALL", s), (s.end, 2, "TOOL_RESULT", s)]
        events.sort(key=lambda e: (e[0], e[1]))
        head = GENESIS
        for seq, (ns, _, kind, s) in enumerate(events, 1):
            a = s.attributes
            owner = tasks[s.span_id] if kind in ("STARTED", "ENDED") else tasks[s.parent_id]
            at = _time(ns)
            figures = dict(model=None, attempts=None, cost=None, tool=None, call_id=None, inp=None, out=None, dur=None,
                           err=None)
            call = None
            if kind == "STARTED":
                summary, payload = sentences.started(owner[3], s.name, {"id": owner[4]}, owner[2] > 0), a["input.value"]
            elif kind == "ENDED":
                summary, payload = sentences.ended("DONE"), a["output.value"]
            elif kind == "MODEL_CALL":
                model, cost = a["gen_ai.request.model"], a["agentlog.cost_micros"]
                inp, out = a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]
                figures.update(model=model, attempts=1, cost=cost, inp=inp, out=out, dur=(s.end - s.start) // 1_000_000)
                response = a["gen_ai.output.messages"]
                payload = compact_json({"systemPrompt": None, "messages": a["gen_ai.input.messages"],
                                        "response": response})
                summary = sentences.model_call(model, None, cost, response, None)
                call = uuid.uuid4()
                turns[owner[0]] = turns.get(owner[0], 0) + 1
                calls.append((call, TENANT, owner[0], owner[1], turns[owner[0]], owner[3], model,
                              a["gen_ai.provider.name"], 1, inp, out, cost, figures["dur"], at))
            else:
                tool = a["gen_ai.tool.name"]
                figures.update(tool=tool, call_id=a["gen_ai.tool.call.id"])
                if kind == "TOOL_RESULT":
                    figures.update(err=False, dur=(s.end - s.start) // 1_000_000)
                    payload = a["gen_ai.tool.call.result"]
                    summary = sentences.tool_result(tool, False, figures["dur"])
                else:
                    payload = a["gen_ai.tool.call.arguments"]
                    summary = sentences.tool_call(tool, False)
            salts = os.urandom(32).hex()
            summary_salt, payload_salt = salts[:32], salts[32:]
            summary_hash, payload_hash = raw_commit(summary_salt, summary), raw_commit(payload_salt, payload)
            fixed = raw_fixed(seq, kind, owner[0], at, figures["model"], None, figures["attempts"], figures["cost"],
                              figures["inp"], figures["out"], figures["tool"], figures["call_id"], figures["err"],
                              figures["dur"])
            hash_ = raw_line_hash(head, fixed, summary_hash, payload_hash)
            lines.append((
                TENANT, root, seq, kind, owner[0], at, summary, payload, figures["model"], figures["attempts"],
                figures["cost"], call, figures["tool"], figures["call_id"], figures["inp"], figures["out"],
                figures["dur"], figures["err"], summary_salt, payload_salt, summary_hash, payload_hash, head, hash_,
            ))
            head = hash_
            if len(lines) == CHUNK:
                writes.send(conn.copy_records_to_table, "trace_event", records=lines, columns=LINE_COLUMNS)
                lines = []
                await asyncio.sleep(0)
        writes.send(conn.copy_records_to_table, "trace_event", records=lines, columns=LINE_COLUMNS)
        writes.send(conn.copy_records_to_table, "llm_call", records=calls, columns=CALL_COLUMNS)
        writes.send(conn.execute, "UPDATE agent_task SET chain_length = $2, chain_head = $3 WHERE id = $1", root,
                    seq, head)
        writes.send(conn.execute, KEEP, root, TENANT, seq, head, note_for(TENANT, str(root), seq, head))


class InOrder:
    """Statements sent in order on one connection by a task of their own while the caller goes on hashing, as
    agentlog's placing does (`resolvers/write/pipeline.py`); leaving the block waits for them all."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple | None] = asyncio.Queue()

    def send(self, statement: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> None:
        self.queue.put_nowait((statement, args, kwargs))

    async def _run(self) -> None:
        while (job := await self.queue.get()) is not None:
            statement, args, kwargs = job
            await statement(*args, **kwargs)

    async def __aenter__(self) -> InOrder:
        self.task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, kind: Any, error: BaseException | None, trace: Any) -> None:
        self.queue.put_nowait(None)
        if error is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
            return
        await self.task


async def warm(url: str) -> asyncpg.Connection:
    """A connection that has written one trace already, untimed: its statements are prepared and its types
    known, as on a server's pooled connection."""
    conn = await asyncpg.connect(url)
    await baseline(conn, make_spans())
    return conn


COUNTS = """SELECT (SELECT count(*) FROM agent_task WHERE root_id = $1),
                   (SELECT count(*) FROM trace_event WHERE root_id = $1),
                   (SELECT count(*) FROM llm_call c JOIN agent_task t ON t.id = c.task_id WHERE t.root_id = $1)"""


async def stored(conn: asyncpg.Connection, root: str) -> tuple[int, int, int]:
    """The tree's tasks, lines and meter rows, counted."""
    return tuple(await conn.fetchrow(COUNTS, uuid.UUID(root)))
