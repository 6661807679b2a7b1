"""Where OTLP spans are kept between their export and their placing, and what placing reads of them.

Every read is keyed by span id (or, for the spans waiting below some spans, by their parent's id), so an export
reads what it carries and what it hangs under, never the whole trace it belongs to. Spans of one trace are
taken in turns under the trace's lock.
"""

from __future__ import annotations

from typing import Any

from models.chain import compact_json
from models.db import placeholders
from resolvers.otlp_place import STAND_IN_SPAN, KnownSpan
from resolvers.write_path import insert_rows

WAITING_COLUMNS = ("tenant", "trace_id", "span_id", "parent_span_id", "kind", "body", "received_us")
PLACED_COLUMNS = ("tenant", "trace_id", "span_id", "parent_span_id", "kind", "task_id", "tool")
IDS = {"postgres": "=ANY({})", "sqlite": 'IN (SELECT "value" FROM json_each({}))'}
KNOWN = (
    'SELECT "span_id","parent_span_id","kind","received_us",NULL AS "task_id",NULL AS "tool",0 AS "placed" '
    'FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2 AND "span_id" {ids3} '
    'UNION ALL SELECT "span_id","parent_span_id","kind",NULL,"task_id","tool",1 '
    'FROM "otlp_placed_span" WHERE "tenant"=$4 AND "trace_id"=$5 AND "span_id" {ids6}'
)
BELOW = (
    'WITH RECURSIVE "below"("span_id","parent_span_id","kind","received_us") AS ('
    'SELECT "span_id","parent_span_id","kind","received_us" FROM "otlp_span" '
    'WHERE "tenant"=$1 AND "trace_id"=$2 AND "parent_span_id" {ids3} '
    'UNION SELECT s."span_id",s."parent_span_id",s."kind",s."received_us" FROM "otlp_span" s '
    'JOIN "below" b ON s."parent_span_id"=b."span_id" WHERE s."tenant"=$4 AND s."trace_id"=$5'
    ') SELECT "span_id","parent_span_id","kind","received_us" FROM "below"'
)
DUE = ('SELECT "span_id","parent_span_id","kind","received_us" FROM "otlp_span" '
       'WHERE "tenant"=$1 AND "trace_id"=$2 AND "received_us"<=$3')
BODIES = 'SELECT "span_id","body" FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2 AND "span_id" {ids3}'
NO_LONGER_WAITING = 'DELETE FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2 AND "span_id" {ids3}'
WAITING_COUNT = 'SELECT COUNT(*) AS "n" FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2'
WAITING_TRACES = 'SELECT DISTINCT "tenant","trace_id" FROM "otlp_span" WHERE "received_us"<=$1'
STAND_IN = (
    'INSERT INTO "otlp_placed_span" ("tenant","trace_id","span_id","parent_span_id","kind","task_id","tool") '
    "VALUES ($1,$2,$3,NULL,'agent',$4,NULL) "
    'ON CONFLICT ("tenant","trace_id","span_id") DO UPDATE SET "task_id"=excluded."task_id"'
)


def _sql(conn: Any, template: str) -> str:
    ids = IDS[conn.capabilities.dialect]
    return placeholders(conn, template.format(ids3=ids.format("$3"), ids6=ids.format("$6")))


def _span_ids(conn: Any, span_ids: list[str]) -> Any:
    """Span ids as one parameter: an array on PostgreSQL, JSON text for `json_each` on SQLite."""
    return span_ids if conn.capabilities.dialect == "postgres" else compact_json(span_ids)


def _known(row: dict[str, Any], placed: bool) -> KnownSpan:
    task_id = row.get("task_id")
    return KnownSpan(row["span_id"], row["parent_span_id"], row["kind"], row["received_us"], placed,
                     None if task_id is None else str(task_id), row.get("tool"))


async def lock_trace(conn: Any, tenant: str, trace_id: str) -> None:
    """Placers of one trace take turns (on SQLite the single writer already serialises them)."""
    if conn.capabilities.dialect == "postgres":
        await conn.execute_query("SELECT pg_advisory_xact_lock(hashtext($1))", [f"{tenant}/{trace_id}"])


async def known(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> list[KnownSpan]:
    """The spans of `span_ids` taken so far, waiting or placed."""
    if not span_ids:
        return []
    ids = _span_ids(conn, span_ids)
    rows = await conn.execute_query_dict(_sql(conn, KNOWN), [tenant, trace_id, ids, tenant, trace_id, ids])
    return [_known(row, bool(row["placed"])) for row in rows]


async def waiting_below(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> list[KnownSpan]:
    """Every waiting span below the spans of `span_ids`, through waiting spans."""
    if not span_ids:
        return []
    rows = await conn.execute_query_dict(_sql(conn, BELOW), [tenant, trace_id, _span_ids(conn, span_ids), tenant,
                                                             trace_id])
    return [_known(row, False) for row in rows]


async def due(conn: Any, tenant: str, trace_id: str, due_us: int) -> list[KnownSpan]:
    """The trace's spans that have waited since `due_us` or longer."""
    rows = await conn.execute_query_dict(placeholders(conn, DUE), [tenant, trace_id, due_us])
    return [_known(row, False) for row in rows]


async def waiting_traces(conn: Any, due_us: int) -> list[tuple[str, str]]:
    rows = await conn.execute_query_dict(placeholders(conn, WAITING_TRACES), [due_us])
    return [(row["tenant"], row["trace_id"]) for row in rows]


async def waiting_count(conn: Any, tenant: str, trace_id: str) -> int:
    rows = await conn.execute_query_dict(placeholders(conn, WAITING_COUNT), [tenant, trace_id])
    return rows[0]["n"]


async def bodies(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> list[dict[str, Any]]:
    """The stored bodies of waiting spans."""
    if not span_ids:
        return []
    return await conn.execute_query_dict(_sql(conn, BODIES), [tenant, trace_id, _span_ids(conn, span_ids)])


async def wait(conn: Any, rows: list[tuple]) -> None:
    """Spans that must wait, as rows of WAITING_COLUMNS."""
    if rows:
        await insert_rows(conn, "otlp_span", WAITING_COLUMNS, rows)


async def placed(conn: Any, tenant: str, trace_id: str, spans: list[KnownSpan]) -> None:
    """Spans placed (the trace's stand-in is kept by `stand_in`)."""
    if spans:
        rows = [(tenant, trace_id, s.span_id, s.parent_span_id, s.kind, s.task_id, s.tool) for s in spans]
        await insert_rows(conn, "otlp_placed_span", PLACED_COLUMNS, rows)


async def no_longer_waiting(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> None:
    if span_ids:
        await conn.execute_query(_sql(conn, NO_LONGER_WAITING), [tenant, trace_id, _span_ids(conn, span_ids)])


async def stand_in(conn: Any, tenant: str, trace_id: str, task_id: str | None) -> None:
    """The trace's running stand-in from now on; None once it has ended."""
    await conn.execute_query(placeholders(conn, STAND_IN), [tenant, trace_id, STAND_IN_SPAN, task_id])
