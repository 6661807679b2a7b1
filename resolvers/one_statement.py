"""Several PostgreSQL writes sent as one statement, so a short append costs one round trip for all it stores.

Each write but the last becomes a data-modifying `WITH`; PostgreSQL runs every one of them exactly once, to
completion, on the statement's one snapshot, and the statement answers the last write's rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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


def insert(table: str, columns: tuple[str, ...], rows: list[tuple]) -> Statement:
    names = ",".join(f'"{c}"' for c in columns)
    return Statement(f'INSERT INTO "{table}" ({names}) VALUES {values_list(len(rows), len(columns))}',
                     [value for row in rows for value in row])


def _numbered_after(sql: str, offset: int) -> str:
    return PLACEHOLDER.sub(lambda found: f"${int(found.group(1)) + offset}", sql)


def together(writes: list[Statement], last: Statement) -> Statement:
    """`writes`, then `last`, as one statement answering `last`'s rows."""
    parts, args = [], []
    for at, write in enumerate(writes):
        parts.append(f'"write{at}" AS ({_numbered_after(write.sql, len(args))})')
        args += write.args
    sql = _numbered_after(last.sql, len(args))
    return Statement(f"WITH {', '.join(parts)} {sql}" if parts else sql, args + last.args)
