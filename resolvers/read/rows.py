"""Rows read as plain values, for the reads that answer whole trees at once.

Model instances cost several microseconds each to build; a tree read may hold tens of thousands of
rows. These reads send hand-written SQL through the ORM's connection (so every statement is still the
connection's) and keep each row as a named tuple with the model's column names, built in one step from
the driver's record.
"""

from __future__ import annotations

import uuid
from collections import namedtuple
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache, partial
from itertools import groupby
from operator import attrgetter
from typing import Any, NamedTuple, TypeVar

from tortoise.connection import get_connection
from tortoise.models import Model

from models import AgentTask, TraceEvent, line_columns

R = TypeVar("R")


class TaskRow(NamedTuple):
    """An `agent_task` row."""

    id: uuid.UUID
    tenant: str
    agent: str
    skill: str
    skill_version: str | None
    cause: str
    about: str | None
    trigger: str | None
    given: str | None
    instruction_set: int | None
    instructions_sent: str | None
    instructions_hash: str | None
    requester_id: str | None
    requester_name: str | None
    actor_id: str
    actor_name: str | None
    status: str
    outcome: str | None
    result: str | None
    limit_micros: int | None
    started_at: datetime
    ended_at: datetime | None
    session: str | None
    workflow_run: str | None
    run_step: str | None
    entity_type: str | None
    entity_id: str | None
    parent_id: uuid.UUID | None
    root_id: uuid.UUID
    depth: int
    sequence: int
    path: str
    chain_length: int
    chain_head: str
    withheld: str | None
    content_erased_at: datetime | None
    anonymised_at: datetime | None
    stops: str | None = None


LINE_KEYS = ("task_id", "seq")
LineRow = namedtuple(
    "LineRow",
    [*LINE_KEYS, *(c for c in line_columns.COLUMNS if c not in LINE_KEYS)],
    defaults=[None] * (len(line_columns.COLUMNS) - len(LINE_KEYS)),
)
LineRow.__doc__ = "A `trace_event` row. A read of some columns only gets a `line_row(columns)` of just those."


TASK_COLUMNS: tuple[str, ...] = TaskRow._fields
LINE_COLUMNS: frozenset[str] = frozenset(LineRow._fields)


def task_row_of(task: Any) -> TaskRow:
    """A task read as a model instance, as the row the loaders keep."""
    return task if isinstance(task, TaskRow) else TaskRow(*(getattr(task, name) for name in TASK_COLUMNS))


class ReadQuery:
    """One statement for the default connection's dialect: `param` adds a value and answers its placeholder."""

    def __init__(self) -> None:
        self.postgres = get_connection("default").capabilities.dialect == "postgres"
        self.params: list[Any] = []

    def param(self, value: Any) -> str:
        if not self.postgres and isinstance(value, uuid.UUID):
            value = str(value)
        self.params.append(value)
        return f"${len(self.params)}" if self.postgres else "?"

    def one_of(self, column: str, values: Iterable[Any]) -> str:
        """`column` is one of `values`: one array parameter on PostgreSQL, a list of placeholders on SQLite."""
        values = list(values)
        if not values:
            return "1 = 0"
        if self.postgres:
            return f"{column} = ANY({self.param(values)})"
        return f"{column} IN ({', '.join(self.param(v) for v in values)})"

    def starts_with(self, column: str, prefixes: Iterable[str]) -> str:
        """`column` begins with one of `prefixes`: LIKE on PostgreSQL, GLOB on SQLite; an index serves both."""
        op, wildcard = ("LIKE", "%") if self.postgres else ("GLOB", "*")
        terms = [f"{column} {op} {self.param(p + wildcard)}" for p in prefixes]
        return f"({' OR '.join(terms)})" if terms else "1 = 0"

    async def rows(self, sql: str) -> Sequence[Any]:
        _, rows = await get_connection("default").execute_query(sql, self.params)
        return rows


def _converters(model: type[Model], columns: Sequence[str], postgres: bool) -> list[tuple[int, Any]]:
    """The columns SQLite hands back as text or numbers that the model keeps as UUIDs, times or booleans."""
    if postgres:
        return []
    converters = []
    for i, name in enumerate(columns):
        field = model._meta.fields_map[name]
        if field.field_type in (uuid.UUID, datetime, bool):
            converters.append((i, field.to_python_value))
    return converters


async def read(model: type[Model], row: type[R], statement: ReadQuery, sql: str) -> list[R]:
    """Runs `sql`, which selects every column of `row` in order, and builds one `row` per result."""
    found = await statement.rows(sql)
    converters = _converters(model, row._fields, statement.postgres)  # type: ignore[attr-defined]
    make = tuple.__new__
    if not converters:
        return [make(row, record) for record in found]
    return [make(row, _converted(record, converters)) for record in found]


def select(columns: Sequence[str], table: str) -> str:
    listed = ", ".join('"' + column + '"' for column in columns)
    return f"SELECT {listed} FROM {table}"


async def read_tasks(statement: ReadQuery, where: str, order: str = "") -> list[TaskRow]:
    sql = f"{select(TASK_COLUMNS, 'agent_task')} WHERE {where}{' ORDER BY ' + order if order else ''}"
    return await read(AgentTask, TaskRow, statement, sql)


@lru_cache(maxsize=64)
def line_row(columns: frozenset[str]) -> type:
    """The row type of a read of some of `trace_event`'s columns (`seq` always): LineRow when it asks for all."""
    if columns >= LINE_COLUMNS:
        return LineRow
    return namedtuple("LineColumns", [name for name in LineRow._fields if name in columns or name == "seq"])


async def read_lines(
    statement: ReadQuery, key: str, columns: Iterable[str], where: str, order: str
) -> dict[Any, list[Any]]:
    """Lines holding the columns asked for (and `seq` and `key`), grouped by the `key` column, each group in
    `order`. Rows are made and grouped in C (map, groupby): a page of thousands of lines of one key is one run."""
    row = line_row(frozenset({*columns, key}))
    found = await statement.rows(f"{select(row._fields, 'trace_event')} WHERE {where} ORDER BY {order}")
    converters = _converters(TraceEvent, row._fields, statement.postgres)
    if converters:
        found = [_converted(record, converters) for record in found]
    out: dict[Any, list[Any]] = {}
    for value, run in groupby(map(partial(tuple.__new__, row), found), attrgetter(key)):
        group = out.get(value)
        if group is None:
            out[value] = list(run)
        else:
            group.extend(run)
    return out


def _converted(record: Sequence[Any], converters: list[tuple[int, Any]]) -> list[Any]:
    values = list(record)
    for i, convert in converters:
        values[i] = convert(values[i])
    return values
