"""Which tenant each statement sent for a caller names (SPEC 8.3): a hook on the database connection records every
statement sent while a caller's request runs, and `faults` reads each with sqlglot and says where one reads or
writes a tenant's table without naming that caller's tenant.

A table reference names the tenant when its own query holds `tenant = <the caller's tenant>` (a bound parameter
or a literal), or `tenant = other.tenant` for a reference that names it; an INSERT names it in the value it gives
the `tenant` column, a COPY in every row. No statement may set `tenant` in an UPDATE, nor carry another known
tenant's name in its parameters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import asyncpg
import sqlglot
from sqlglot import exp
from tortoise.backends.asyncpg.client import AsyncpgDBClient, TransactionWrapper
from tortoise.connection import get_connection

CALLER: ContextVar[str | None] = ContextVar("caller_tenant", default=None)
TENANT = "tenant"


@dataclass(frozen=True)
class Sent:
    tenant: str
    sql: str
    rows: tuple[tuple, ...]


@contextmanager
def caller(tenant: str) -> Iterator[None]:
    """Statements sent until the block ends are sent for `tenant`."""
    token = CALLER.set(tenant)
    try:
        yield
    finally:
        CALLER.reset(token)


def _record(sent: list[Sent], sql: str, rows: Sequence[Sequence[Any]]) -> None:
    tenant = CALLER.get()
    if tenant is not None:
        sent.append(Sent(tenant, sql, tuple(tuple(row) for row in rows)))


@contextmanager
def _sqlite_hook(sent: list[Sent]) -> Iterator[None]:
    cls = type(get_connection("default"))
    names = ("execute_query", "execute_query_dict", "execute_insert", "execute_many")
    originals = {name: getattr(cls, name) for name in names}

    def hooked(name: str) -> Any:
        original = originals[name]

        async def run(self: Any, query: str, values: Any = None, *args: Any, **kwargs: Any) -> Any:
            _record(sent, query, values if name == "execute_many" else [values or ()])
            return await original(self, query, values, *args, **kwargs)

        return run

    for name in names:
        setattr(cls, name, hooked(name))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(cls, name, original)


@contextmanager
def _postgres_hook(sent: list[Sent]) -> Iterator[None]:
    """asyncpg's own query logger on every connection tortoise-orm lends out (its pool's and its transactions'),
    for as long as it is lent, so raw statements on a lent connection are seen too; COPY, which the logger does
    not see, is recorded from its rows."""
    lent_now: dict[int, int] = {}

    def log(query: Any) -> None:
        args = query.args or ()
        many = bool(args) and isinstance(args[0], (list, tuple)) and query.query.lstrip().upper().startswith("INSERT")
        _record(sent, query.query, list(args) if many else [args])

    originals = {cls: cls.acquire_connection for cls in (AsyncpgDBClient, TransactionWrapper)}

    def lending(original: Any) -> Any:
        def acquire(self: Any) -> Any:
            @asynccontextmanager
            async def lent() -> Any:
                async with original(self) as raw:
                    held = lent_now.get(id(raw), 0)
                    if not held:
                        raw.add_query_logger(log)
                    lent_now[id(raw)] = held + 1
                    try:
                        yield raw
                    finally:
                        lent_now[id(raw)] -= 1
                        if not lent_now[id(raw)]:
                            raw.remove_query_logger(log)

            return lent()

        return acquire

    copy = asyncpg.connection.Connection.copy_records_to_table

    async def copying(self: Any, table: str, *, records: Any, columns: Sequence[str], **kwargs: Any) -> Any:
        names = ",".join(f'"{c}"' for c in columns)
        marks = ",".join(f"${i}" for i in range(1, len(columns) + 1))
        records = list(records)
        _record(sent, f'INSERT INTO "{table}" ({names}) VALUES ({marks})', records)
        return await copy(self, table, records=records, columns=columns, **kwargs)

    for cls, original in originals.items():
        cls.acquire_connection = lending(original)
    asyncpg.connection.Connection.copy_records_to_table = copying
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.acquire_connection = original
        asyncpg.connection.Connection.copy_records_to_table = copy


@contextmanager
def watched() -> Iterator[list[Sent]]:
    """Every statement sent for a caller (see `caller`) while the block runs."""
    sent: list[Sent] = []
    postgres = get_connection("default").capabilities.dialect == "postgres"
    with (_postgres_hook if postgres else _sqlite_hook)(sent):
        yield sent


async def tenant_tables() -> frozenset[str]:
    """The tables of this database with a `tenant` column."""
    conn = get_connection("default")
    if conn.capabilities.dialect == "postgres":
        rows = await conn.execute_query_dict(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = $1",
            [TENANT],
        )
        return frozenset(row["table_name"] for row in rows)
    tables = await conn.execute_query_dict("SELECT name FROM sqlite_master WHERE type = 'table'")
    found = set()
    for row in tables:
        columns = await conn.execute_query_dict(f"SELECT name FROM pragma_table_info('{row['name']}')")
        if any(column["name"] == TENANT for column in columns):
            found.add(row["name"])
    return frozenset(found)


_WORD = re.compile(r"\w+")
_PARAM = re.compile(r"\$(\d+)")
_QMARK = re.compile(r"'(?:[^']|'')*'|\?")
_OPERATORS = {"~>=~": ">=", "~<~": "<", "~<=~": "<=", "~>~": ">"}
_QUERIES = (exp.Select, exp.Update, exp.Delete, exp.Insert)


def _parseable(sql: str, postgres: bool) -> str:
    """Placeholders as sqlglot's `:pN`, and PostgreSQL's pattern operators as the comparisons they are."""
    if postgres:
        sql = _PARAM.sub(r":p\1", sql)
    else:
        count = iter(range(1, 10_000))
        sql = _QMARK.sub(lambda m: m.group(0) if m.group(0) != "?" else f":p{next(count)}", sql)
    for operator, plain in _OPERATORS.items():
        sql = sql.replace(operator, plain)
    return sql


def _query_of(node: exp.Expression) -> exp.Expression | None:
    return node.find_ancestor(*_QUERIES)


def _own_tables(query: exp.Expression, tables: frozenset[str]) -> list[exp.Table]:
    return [t for t in query.find_all(exp.Table) if t.name in tables and _query_of(t) is query]


class _Reader:
    def __init__(self, tree: exp.Expression, row: tuple, tenant: str, tables: frozenset[str]) -> None:
        self.tree, self.row, self.tenant, self.tables = tree, row, tenant, tables

    def is_caller(self, value: exp.Expression) -> bool:
        while isinstance(value, (exp.Cast, exp.Paren)):
            value = value.this
        if isinstance(value, exp.Placeholder):
            index = int(value.name[1:]) - 1
            return index < len(self.row) and self.row[index] == self.tenant
        return isinstance(value, exp.Literal) and value.is_string and value.this == self.tenant

    def tenant_of(self, column: exp.Expression) -> exp.Table | None:
        """The table reference whose `tenant` the column is, looked up from the column's query outwards."""
        if not isinstance(column, exp.Column) or column.name != TENANT:
            return None
        query = _query_of(column)
        while query is not None:
            own = _own_tables(query, self.tables)
            if column.table:
                own = [t for t in own if t.alias_or_name == column.table]
            if own:
                return own[0]
            if column.table == "" and isinstance(query, exp.Select) and query.args.get("from_"):
                return None
            query = _query_of(query)
        return None

    def named(self) -> set[int]:
        """The ids of the table references whose query names the caller's tenant, directly or through an equal
        tenant column."""
        named: set[int] = set()
        pairs = []
        for eq in self.tree.find_all(exp.EQ):
            left, right = eq.this, eq.expression
            for a, b in ((left, right), (right, left)):
                table = self.tenant_of(a)
                if table is None:
                    continue
                if self.is_caller(b):
                    named.add(id(table))
                other = self.tenant_of(b)
                if other is not None:
                    pairs.append((table, other))
        for in_ in self.tree.find_all(exp.In):
            table = self.tenant_of(in_.this)
            values = in_.expressions
            if table is not None and values and all(self.is_caller(v) for v in values):
                named.add(id(table))
        changed = True
        while changed:
            changed = False
            for a, b in pairs:
                if id(b) in named and id(a) not in named:
                    named.add(id(a))
                    changed = True
        return named

    def inserted(self, insert: exp.Insert) -> list[str]:
        schema = insert.this
        table = schema.this if isinstance(schema, exp.Schema) else schema
        if not isinstance(table, exp.Table) or table.name not in self.tables:
            return []
        columns = [c.name for c in schema.expressions] if isinstance(schema, exp.Schema) else []
        if TENANT not in columns:
            return [f"INSERT INTO {table.name} gives no tenant"]
        at = columns.index(TENANT)
        source = insert.expression
        if isinstance(source, exp.Values):
            if all(self.is_caller(row.expressions[at]) for row in source.expressions):
                return []
            return [f"INSERT INTO {table.name} gives another tenant"]
        if isinstance(source, exp.Select):
            value = source.expressions[at]
            if self.is_caller(value) or self.tenant_of(value) is not None:
                return []
        return [f"INSERT INTO {table.name} takes its tenant from nowhere named"]


def faults(sent: Sent, tables: frozenset[str], postgres: bool, others: frozenset[str] = frozenset()) -> list[str]:
    """What in one statement does not name exactly the caller's tenant; empty when it does. A statement that
    names none of the tenant tables (a transaction's start, the driver's catalog lookups) has nothing to name."""
    if not tables.intersection(_WORD.findall(sent.sql)):
        return []
    try:
        tree = sqlglot.parse_one(_parseable(sent.sql, postgres), read="postgres" if postgres else "sqlite")
    except sqlglot.errors.SqlglotError as exc:
        return [f"unreadable: {exc}"]
    found: list[str] = []
    for row in sent.rows or ((),):
        strangers = others.intersection(v for v in row if isinstance(v, str))
        if strangers:
            found.append(f"names another tenant: {sorted(strangers)}")
        reader = _Reader(tree, row, sent.tenant, tables)
        named = reader.named()
        for insert in tree.find_all(exp.Insert):
            found += reader.inserted(insert)
        for table in tree.find_all(exp.Table):
            if table.name not in tables or isinstance(table.parent, exp.Schema) or isinstance(table.parent, exp.Insert):
                continue
            if id(table) not in named:
                found.append(f"{table.name} ({table.alias_or_name}) is read without the caller's tenant")
        for assignment in _assignments(tree):
            if isinstance(assignment.this, exp.Column) and assignment.this.name == TENANT:
                found.append("an UPDATE sets tenant")
    return sorted(set(found))


def _assignments(tree: exp.Expression) -> Iterator[exp.EQ]:
    for update in tree.find_all(exp.Update):
        yield from update.expressions
    for conflict in tree.find_all(exp.OnConflict):
        yield from conflict.expressions or ()
