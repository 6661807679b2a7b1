"""Provisional work (SPEC 9.1): the spans of the caller's tenant still waiting to be placed, by trace, newest first.
Not part of the record: read from `otlp_span`, where a span stays from its export until the pass that places it,
so a span is here from the answer to its export until it is placed. Never content: a span's name, kind, agent,
model, tool, tokens, times and status only."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from tortoise.connection import get_connection

from models.db import placeholders
from models.errors import BadInput
from models.record import fast_json
from permissions.access import Access

MAX_TRACES = 100
MAX_SPANS = 1000
KINDS = {"agent": "AGENT", "llm": "MODEL_CALL", "tool": "TOOL"}

TRACES = (
    'SELECT "trace_id", MIN("received_us") AS "first_us", MAX("received_us") AS "last_us" FROM "otlp_span" '
    'WHERE "tenant"=$1 GROUP BY "trace_id" {having} ORDER BY "last_us" DESC, "trace_id" DESC LIMIT {limit}'
)
PAST = 'HAVING MAX("received_us")<$2 OR (MAX("received_us")=$3 AND "trace_id"<$4)'
COUNT = 'SELECT COUNT(DISTINCT "trace_id") AS "n" FROM "otlp_span" WHERE "tenant"=$1'
SPANS = ('SELECT "trace_id","span_id","parent_span_id","kind","body" FROM "otlp_span" '
         'WHERE "tenant"=$1 AND "trace_id" IN ({})')


@dataclass(slots=True)
class WaitingSpanRow:
    span_id: str
    parent_span_id: str | None
    name: str
    kind: str
    agent: str | None
    model: str | None
    tool: str | None
    input_tokens: int | None
    output_tokens: int | None
    started_at: datetime
    ended_at: datetime | None
    failed: bool


@dataclass(slots=True)
class RunningTraceRow:
    trace_id: str
    first_seen_at: datetime
    last_seen_at: datetime
    spans: list[WaitingSpanRow] = field(default_factory=list)

    @property
    def cursor(self) -> str:
        return f"{int(self.last_seen_at.timestamp() * 1_000_000)}.{self.trace_id}"


@dataclass(slots=True)
class RunningPage:
    traces: list[RunningTraceRow]
    more: bool
    tenant: str | None = None

    async def total(self) -> int:
        if self.tenant is None:
            return 0
        conn = get_connection("default")
        rows = await conn.execute_query_dict(placeholders(conn, COUNT), [self.tenant])
        return rows[0]["n"]


def _time(us: int) -> datetime:
    return datetime.fromtimestamp(us / 1_000_000, timezone.utc)


def _ns(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, timezone.utc)


def _after(after: str | None) -> tuple[int, str] | None:
    if after is None:
        return None
    last, _, trace_id = after.partition(".")
    if not last.isdigit() or len(trace_id) != 32:
        raise BadInput("after: not a cursor of runningTraces.", field="after")
    return int(last), trace_id


def _span(row: dict[str, Any]) -> WaitingSpanRow:
    body = fast_json.loads(row["body"].encode())
    f = body.get("fields", {})
    kind = KINDS.get(row["kind"], "OTHER")
    llm = kind == "MODEL_CALL"
    return WaitingSpanRow(
        row["span_id"], row["parent_span_id"], body.get("name") or "", kind,
        f.get("agent") if kind == "AGENT" else None, f.get("model") if llm else None,
        f.get("tool") if kind == "TOOL" else None, f.get("input_tokens") if llm else None,
        f.get("output_tokens") if llm else None, _ns(body.get("start")), _ns(body.get("end")), bool(body.get("failed")),
    )


async def running_traces(access: Access, first: int, after: str | None) -> RunningPage:
    """A page of the traces with spans waiting, the most recently received first; empty for a caller the tenant's
    policies do not name (supervisesAgents, auditsAgents, readsAllAgentWork) and who is not its kit."""
    if not 1 <= first <= MAX_TRACES:
        raise BadInput(f"first: ask for 1 to {MAX_TRACES} traces, not {first}.", field="first")
    past = _after(after)
    if access.principal is None or not await access.reads_running_traces():
        return RunningPage([], False)
    tenant = access.tenant
    conn = get_connection("default")
    sql = TRACES.format(having=PAST if past else "", limit=first + 1)
    rows = await conn.execute_query_dict(placeholders(conn, sql), [tenant, *((past[0], *past) if past else ())])
    traces = [RunningTraceRow(r["trace_id"], _time(r["first_us"]), _time(r["last_us"])) for r in rows[:first]]
    if traces:
        by_id = {t.trace_id: t for t in traces}
        marks = ",".join(f"${i}" for i in range(2, len(by_id) + 2))
        for row in await conn.execute_query_dict(placeholders(conn, SPANS.format(marks)), [tenant, *by_id]):
            by_id[row["trace_id"]].spans.append(_span(row))
        for trace in traces:
            trace.spans.sort(key=lambda s: (s.started_at, s.span_id))
    return RunningPage(traces, len(rows) > first, tenant)


def spans_page(spans: list[WaitingSpanRow], first: int | None, after: str | None) -> list[WaitingSpanRow]:
    """A trace's waiting spans in the order they started, past the span `after`."""
    if first is not None and not 1 <= first <= MAX_SPANS:
        raise BadInput(f"first: ask for 1 to {MAX_SPANS} spans, not {first}.", field="first")
    if after is not None:
        position = next((i for i, s in enumerate(spans) if s.span_id == after), None)
        if position is None:
            raise BadInput("after: not the id of a span waiting in this trace.", field="after")
        spans = spans[position + 1:]
    return spans[:first or MAX_SPANS]
