"""Several PostgreSQL writes sent as one statement, so a short append costs one round trip for all it stores.

Each write but the last becomes a data-modifying `WITH`; PostgreSQL runs every one of them exactly once, to
completion, on the statement's one snapshot, and the statement answers the last write's rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

PLACEHOLDER = re.compile(r"\$(\d+)")


@dataclass(frozen=True, slots=True)
class Statement:
    """SQL with PostgreSQL's $n placeholders, and its values."""

    sql: str
    args: list[Any]


def values_list(rows: int, columns: int, start: int = 1) -> str:
    """`($1,…,$n),(…)` for `rows` rows of `columns` values, numbered from `start`."""
    return ",".join(
        "(" + ",".join(f"${start + r * columns + c}" for c in range(columns)) + ")" for r in range(rows)
    )


@lru_cache(maxsize=64)
def _insert_sql(table: str, columns: tuple[str, ...], rows: int) -> str:
    names = ",".join(f'"{c}"' for c in columns)
    return f'INSERT INTO "{table}" ({names}) VALUES {values_list(rows, len(columns))}'


def insert(table: str, columns: tuple[str, ...], rows: list[tuple]) -> Statement:
    return Statement(_insert_sql(table, columns, len(rows)), [value for row in rows for value in row])


def _numbered_after(sql: str, offset: int) -> str:
    return PLACEHOLDER.sub(lambda found: f"${int(found.group(1)) + offset}", sql)


@lru_cache(maxsize=256)
def _together_sql(parts: tuple[tuple[str, int], ...]) -> str:
    """The SQL of `together` for statements given as (SQL, how many values), the last one answering."""
    withs, offset = [], 0
    for at, (sql, values) in enumerate(parts[:-1]):
        withs.append(f'"write{at}" AS ({_numbered_after(sql, offset)})')
        offset += values
    last = _numbered_after(parts[-1][0], offset)
    return f"WITH {', '.join(withs)} {last}" if withs else last


def together(writes: list[Statement], last: Statement) -> Statement:
    """`writes`, then `last`, as one statement answering `last`'s rows."""
    statements = (*writes, last)
    args = [value for statement in statements for value in statement.args]
    return Statement(_together_sql(tuple((s.sql, len(s.args)) for s in statements)), args)
