"""Where OTLP spans are kept between their export and their placing, and what placing reads of them.

Every read is keyed by span id (or, for the spans waiting below some spans, by their parent's id), so an export
reads what it carries and what it hangs under, never the whole trace it belongs to. Spans of one trace are
taken in turns under the trace's lock.
"""

from __future__ import annotations

from typing import Any

from models.db import keys_for, placeholders
from resolvers.otlp.mapping import OTHER
from resolvers.otlp.place import STAND_IN_SPAN, KnownSpan
from resolvers.write.append import insert_rows
from resolvers.write.one_statement import Statement, together

WAITING_COLUMNS = ("tenant", "trace_id", "span_id", "parent_span_id", "kind", "body", "received_us")
PLACED_COLUMNS = ("tenant", "trace_id", "span_id", "parent_span_id", "kind", "task_id", "tool")
AT_ONCE_BELOW = 250
PLACED_TYPES = ("varchar", "varchar", "varchar", "varchar", "varchar", "uuid", "text")
SPAN = '"span_id","parent_span_id","kind"'


def _known_statements(with_bodies: bool) -> dict[str, str]:
    body, no_body = (',"body"', ",NULL") if with_bodies else ("", "")
    return {
        "postgres": (
            f'SELECT s.* FROM unnest($3::varchar[]) AS w(id) CROSS JOIN LATERAL (SELECT {SPAN},"received_us",'
            f'NULL::uuid AS "task_id",NULL::text AS "tool",0 AS "placed"{body} FROM "otlp_span" '
            'WHERE "span_id"=w.id AND "tenant"=$1 AND "trace_id"=$2 LIMIT 1) s '
            f'UNION ALL SELECT p.* FROM unnest($3::varchar[]) AS w(id) CROSS JOIN LATERAL (SELECT {SPAN},'
            f'NULL::bigint,"task_id","tool",1{no_body} FROM "otlp_placed_span" WHERE "span_id"=w.id AND "tenant"=$1 '
            'AND "trace_id"=$2 LIMIT 1) p'
        ),
        "sqlite": (
            f'SELECT {SPAN},"received_us",NULL AS "task_id",NULL AS "tool",0 AS "placed"{body} FROM "otlp_span" '
            'WHERE "tenant"=? AND "trace_id"=? AND "span_id" IN (SELECT "value" FROM json_each(?)) '
            f'UNION ALL SELECT {SPAN},NULL,"task_id","tool",1{no_body} FROM "otlp_placed_span" '
            'WHERE "tenant"=? AND "trace_id"=? AND "span_id" IN (SELECT "value" FROM json_each(?))'
        ),
    }


KNOWN = _known_statements(with_bodies=False)
KNOWN_WITH_BODIES = _known_statements(with_bodies=True)
BELOW = {
    "postgres": (
        'SELECT s.* FROM unnest($3::varchar[]) AS w(id) CROSS JOIN LATERAL (SELECT "tenant","trace_id",'
        f'{SPAN},"received_us",NULL::uuid AS "task_id",NULL::text AS "tool",0 AS "placed" FROM "otlp_span" '
        'WHERE "parent_span_id"=w.id AND "tenant"=$1 AND "trace_id"=$2 OFFSET 0) s '
        'UNION ALL SELECT f.* FROM unnest($3::varchar[]) AS w(id) CROSS JOIN LATERAL (SELECT "tenant","trace_id",'
        f'{SPAN},NULL::bigint,"task_id","tool",1 FROM "otlp_placed_span" '
        f"WHERE \"parent_span_id\"=w.id AND \"kind\"='{OTHER}' AND \"tenant\"=$1 AND \"trace_id\"=$2 OFFSET 0) f"
    ),
    "sqlite": (
        f'SELECT {SPAN},"received_us",NULL AS "task_id",NULL AS "tool",0 AS "placed" FROM "otlp_span" '
        'WHERE "tenant"=? AND "trace_id"=? AND "parent_span_id" IN (SELECT "value" FROM json_each(?)) '
        f'UNION ALL SELECT {SPAN},NULL,"task_id","tool",1 FROM "otlp_placed_span" '
        'WHERE "tenant"=? AND "trace_id"=? AND "parent_span_id" IN (SELECT "value" FROM json_each(?)) '
        f"AND \"kind\"='{OTHER}'"
    ),
}


def _known_and_below() -> dict[str, str]:
    """KNOWN of some span ids ($3), and in the same statement BELOW of others ($4), told apart by "below"; on
    PostgreSQL, the same statement also marks the trace's opened tasks seen at $5 (SEEN) and returns them, "below"
    2, as a data-modifying WITH, which PostgreSQL runs exactly once whatever reads it."""
    columns = '"span_id","parent_span_id","kind","received_us","task_id","tool","placed"'
    return {
        "postgres": (f'WITH "seen" AS ({SEEN_AT.format(seen=5, tenant=1, trace=2)}) '
                     f'SELECT k.*,0 AS "below" FROM ({KNOWN["postgres"]}) k UNION ALL SELECT {columns},1 '
                     f'FROM ({BELOW["postgres"].replace("$3::varchar[]", "$4::varchar[]")}) b UNION ALL '
                     'SELECT "span_id",NULL,NULL,NULL,"task_id",NULL,0,2 FROM "seen"'),
        "sqlite": f'SELECT k.*,0 AS "below" FROM ({KNOWN["sqlite"]}) k UNION ALL SELECT {columns},1 '
                  f'FROM ({BELOW["sqlite"]}) b',
    }


SEEN_AT = ('UPDATE "otlp_open_task" SET "seen_us"=${seen} WHERE "tenant"=${tenant} AND "trace_id"=${trace} '
           'RETURNING "span_id","task_id"')
SEEN = SEEN_AT.format(seen=1, tenant=2, trace=3)
KNOWN_AND_BELOW = _known_and_below()
BODIES = {
    "postgres": (
        'SELECT s.* FROM unnest($3::varchar[]) AS w(id) CROSS JOIN LATERAL (SELECT "span_id","body" FROM "otlp_span" '
        'WHERE "span_id"=w.id AND "tenant"=$1 AND "trace_id"=$2 LIMIT 1) s'
    ),
    "sqlite": 'SELECT "span_id","body" FROM "otlp_span" WHERE "tenant"=? AND "trace_id"=? '
              'AND "span_id" IN (SELECT "value" FROM json_each(?))',
}
NO_LONGER_WAITING = {
    "postgres": (
        'DELETE FROM "otlp_span" WHERE "ctid"=ANY(ARRAY(SELECT s.ctid FROM unnest($3::varchar[]) AS w(id) '
        'CROSS JOIN LATERAL (SELECT "ctid" FROM "otlp_span" WHERE "span_id"=w.id AND "tenant"=$1 AND "trace_id"=$2 '
        'LIMIT 1) s)) AND "tenant"=$1 AND "trace_id"=$2'
    ),
    "sqlite": 'DELETE FROM "otlp_span" WHERE "tenant"=? AND "trace_id"=? '
              'AND "span_id" IN (SELECT "value" FROM json_each(?))',
}
DUE = ('SELECT "span_id","parent_span_id","kind","received_us" FROM "otlp_span" '
       'WHERE "tenant"=$1 AND "trace_id"=$2 AND "received_us"<=$3')
WAITING_COUNT = 'SELECT COUNT(*) AS "n" FROM "otlp_span" WHERE "tenant"=$1 AND "trace_id"=$2'
WAITING_TRACES = 'SELECT DISTINCT "tenant","trace_id" FROM "otlp_span" WHERE "received_us"<=$1'
STAND_IN = (
    'INSERT INTO "otlp_placed_span" ("tenant","trace_id","span_id","parent_span_id","kind","task_id","tool") '
    "VALUES ($1,$2,$3,NULL,'agent',$4,NULL) "
    'ON CONFLICT ("tenant","trace_id","span_id") DO UPDATE SET "task_id"=excluded."task_id"'
)


async def _keyed(conn: Any, statements: dict[str, str], tenant: str, trace_id: str, span_ids: list[str],
                 times: int = 1) -> list[dict[str, Any]]:
    """A statement keyed by span ids, for one trace. On PostgreSQL each id is looked up by itself (a lateral
    lookup per id): a young table has no statistics, and the planner, taking the trace for one row, would
    otherwise scan the whole trace. SQLite's planner looks the ids up through the index as they are."""
    dialect = conn.capabilities.dialect
    args = [tenant, trace_id, keys_for(dialect, span_ids)]
    return await conn.execute_query_dict(statements[dialect], args if dialect == "postgres" else args * times)


def _known(row: dict[str, Any], placed: bool) -> KnownSpan:
    task_id = row.get("task_id")
    return KnownSpan(row["span_id"], row["parent_span_id"], row["kind"], row["received_us"], placed,
                     None if task_id is None else str(task_id), row.get("tool"))


LOCK = ("SELECT set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true), "
        "pg_advisory_xact_lock(hashtext($1))")


async def lock_trace(conn: Any, tenant: str, trace_id: str) -> None:
    """Placers of one trace take turns (on SQLite the single writer already serialises them). The keyed
    lookups are many small index probes whose summed estimate would have PostgreSQL compile them (half a
    second): not within this transaction. Nor is any statement of it planned again for its values: each is a
    lookup by keys, whose plan is the same whatever they are, and planning some (the reads of a pass's tasks,
    given arrays of keys) cost more than running them."""
    if conn.capabilities.dialect == "postgres":
        await conn.execute_query(LOCK, [f"{tenant}/{trace_id}"])


async def known(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> list[KnownSpan]:
    """The spans of `span_ids` taken so far, waiting or placed."""
    if not span_ids:
        return []
    rows = await _keyed(conn, KNOWN, tenant, trace_id, span_ids, times=2)
    return [_known(row, bool(row["placed"])) for row in rows]


async def known_with_bodies(conn: Any, tenant: str, trace_id: str,
                            span_ids: list[str]) -> tuple[list[KnownSpan], dict[str, str]]:
    """`known`, and the stored bodies of those waiting, in the same lookups."""
    if not span_ids:
        return [], {}
    rows = await _keyed(conn, KNOWN_WITH_BODIES, tenant, trace_id, span_ids, times=2)
    return ([_known(row, bool(row["placed"])) for row in rows],
            {row["span_id"]: row["body"] for row in rows if row["body"] is not None})


async def known_and_below(conn: Any, tenant: str, trace_id: str, span_ids: list[str], parents: list[str],
                          received_us: int) -> tuple[list[KnownSpan], list[KnownSpan], dict[str, str]]:
    """`known` of `span_ids`, and the level just below `parents` as `waiting_below` reads it, in one statement; and
    `seen` at `received_us`, on PostgreSQL in the same statement."""
    dialect = conn.capabilities.dialect
    ids, below = keys_for(dialect, span_ids), keys_for(dialect, parents)
    if dialect == "postgres":
        rows = await conn.execute_query_dict(KNOWN_AND_BELOW[dialect], [tenant, trace_id, ids, below, received_us])
        opened = {row["span_id"]: str(row["task_id"]) for row in rows if row["below"] == 2}
        rows = [row for row in rows if row["below"] != 2]
    else:
        opened = await seen(conn, tenant, trace_id, received_us)
        rows = await conn.execute_query_dict(KNOWN_AND_BELOW[dialect], [tenant, trace_id, ids] * 2
                                             + [tenant, trace_id, below] * 2)
    spans = [_known(row, bool(row["placed"])) for row in rows]
    return ([span for span, row in zip(spans, rows) if not row["below"]],
            [span for span, row in zip(spans, rows) if row["below"]], opened)


async def level_below(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> list[KnownSpan]:
    """The waiting spans, and the folded spans placed, whose parents are the spans of `span_ids`."""
    return [_known(row, bool(row["placed"])) for row in await _keyed(conn, BELOW, tenant, trace_id, span_ids, times=2)]


async def waiting_below(conn: Any, tenant: str, trace_id: str, span_ids: list[str],
                        first: list[KnownSpan] | None = None) -> list[KnownSpan]:
    """Every waiting span below the spans of `span_ids`, through waiting spans and through folded spans already
    placed (a span folded away is placed on arrival, while what hangs below it may wait): one statement a
    level, the folded spans found returned too; `first`, when given, is the first level as read already. On
    PostgreSQL each parent is looked up by itself, with its tenant and trace (every statement names the tenant,
    SPEC 8.3). (A recursive statement, level joined to level, ran as a scan of the table per span.)"""
    found: list[KnownSpan] = []
    seen = set(span_ids)
    while span_ids:
        level = await level_below(conn, tenant, trace_id, span_ids) if first is None else first
        first = None
        level = [span for span in level if span.span_id not in seen]
        seen.update(span.span_id for span in level)
        found += level
        span_ids = [span.span_id for span in level]
    return found


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
    return await _keyed(conn, BODIES, tenant, trace_id, span_ids)


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
    """The spans placed, deleted by the rows their keyed lookup finds (on PostgreSQL, by row address)."""
    if span_ids:
        await _keyed(conn, NO_LONGER_WAITING, tenant, trace_id, span_ids)


async def stand_in(conn: Any, tenant: str, trace_id: str, task_id: str | None) -> None:
    """The trace's running stand-in from now on; None once it has ended."""
    await conn.execute_query(placeholders(conn, STAND_IN), [tenant, trace_id, STAND_IN_SPAN, task_id])


OPEN_COLUMNS = ("tenant", "trace_id", "span_id", "task_id", "seen_us")
OPEN_TYPES = ("varchar", "varchar", "varchar", "uuid", "bigint")
QUIET = 'SELECT DISTINCT "tenant","trace_id" FROM "otlp_open_task" WHERE "seen_us"<=$1'
QUIET_IN_TRACE = ('SELECT "span_id","task_id" FROM "otlp_open_task" WHERE "tenant"=$1 AND "trace_id"=$2 '
                  'AND "seen_us"<=$3')
CLOSED = {
    "postgres": 'DELETE FROM "otlp_open_task" WHERE "tenant"=$1 AND "trace_id"=$2 AND "span_id"=ANY($3::varchar[])',
    "sqlite": 'DELETE FROM "otlp_open_task" WHERE "tenant"=? AND "trace_id"=? '
              'AND "span_id" IN (SELECT "value" FROM json_each(?))',
}


async def seen(conn: Any, tenant: str, trace_id: str, received_us: int) -> dict[str, str]:
    """A span of the trace was received now: the tasks start markers opened in it wait on, in the statement that
    reads them. Returns them, by the span id whose end they wait for."""
    rows = await conn.execute_query_dict(placeholders(conn, SEEN), [received_us, tenant, trace_id])
    return {row["span_id"]: str(row["task_id"]) for row in rows}


async def opened(conn: Any, tenant: str, trace_id: str, tasks: list[tuple[str, str]], seen_us: int) -> None:
    """Tasks opened by start markers, as (span id, task id)."""
    if tasks:
        rows = [(tenant, trace_id, span_id, task_id, seen_us) for span_id, task_id in tasks]
        await insert_rows(conn, "otlp_open_task", OPEN_COLUMNS, rows)


async def closed(conn: Any, tenant: str, trace_id: str, span_ids: list[str]) -> None:
    """Opened tasks that have ended: their span came, or the sweep ended them."""
    if span_ids:
        dialect = conn.capabilities.dialect
        await conn.execute_query(CLOSED[dialect], [tenant, trace_id, keys_for(dialect, span_ids)])


async def quiet_traces(conn: Any, since_us: int) -> list[tuple[str, str]]:
    """Traces with an opened task and no span received since `since_us`."""
    rows = await conn.execute_query_dict(placeholders(conn, QUIET), [since_us])
    return [(row["tenant"], row["trace_id"]) for row in rows]


async def quiet_in_trace(conn: Any, tenant: str, trace_id: str, since_us: int) -> dict[str, str]:
    rows = await conn.execute_query_dict(placeholders(conn, QUIET_IN_TRACE), [tenant, trace_id, since_us])
    return {row["span_id"]: str(row["task_id"]) for row in rows}


def _columns_insert(table: str, columns: tuple[str, ...], types: tuple[str, ...], tenant: str, trace_id: str,
                    rows: list[tuple]) -> Statement:
    """Rows of one trace (`columns` begin with the tenant and the trace, which the rows leave out) as one INSERT of
    a column array each: the same text however many rows there are."""
    names = ",".join(f'"{c}"' for c in columns)
    arrays = ",".join(f"${at}::{kind}[]" for at, kind in enumerate(types[2:], 3))
    return Statement(f'INSERT INTO "{table}" ({names}) SELECT $1,$2,u.* FROM unnest({arrays}) AS u',
                     [tenant, trace_id, *(list(column) for column in zip(*rows))])


async def placed_now(conn: Any, tenant: str, trace_id: str, spans: list[KnownSpan], waited: list[str],
                     opening: list[tuple[str, str]], seen_us: int, closing: list[str]) -> None:
    """What a pass leaves of its spans: `placed`, `no_longer_waiting`, `opened` and `closed` of these. On
    PostgreSQL, for fewer than AT_ONCE_BELOW spans, in one statement: none of the four touches a row another does
    (a span opened now was not opened before, so it is not closed now)."""
    if conn.capabilities.dialect != "postgres" or len(spans) >= AT_ONCE_BELOW:
        await placed(conn, tenant, trace_id, spans)
        await no_longer_waiting(conn, tenant, trace_id, waited)
        await opened(conn, tenant, trace_id, opening, seen_us)
        await closed(conn, tenant, trace_id, closing)
        return
    writes = []
    if spans:
        writes.append(_columns_insert("otlp_placed_span", PLACED_COLUMNS, PLACED_TYPES, tenant, trace_id, [
            (s.span_id, s.parent_span_id, s.kind, s.task_id, s.tool) for s in spans]))
    if opening:
        writes.append(_columns_insert("otlp_open_task", OPEN_COLUMNS, OPEN_TYPES, tenant, trace_id, [
            (span_id, task_id, seen_us) for span_id, task_id in opening]))
    if closing:
        writes.append(Statement(CLOSED["postgres"], [tenant, trace_id, closing]))
    if waited:
        writes.append(Statement(NO_LONGER_WAITING["postgres"], [tenant, trace_id, waited]))
    if writes:
        last = writes.pop()
        statement = together(writes, last)
        await conn.execute_query(statement.sql, statement.args)
