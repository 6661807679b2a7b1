"""The `trace_event` columns, derived from the TraceEvent model and the chain's `Line`.

Every reader and writer of lines takes its column list from here, so a new column is one edit to the
model (and its migration). A `Line` field is stored in the column of its own name, except those in
`STORED_AS`; the `Line` flags in `MARKS` are read from whether their column is set.
"""

from __future__ import annotations

import uuid
from dataclasses import fields
from operator import attrgetter
from typing import Any

from models.record.chain import Line
from models.rows.trace_event import TraceEvent

STORED_AS = {"task": "task_id", "erased": "erased_at", "content_erased": "content_erased_at"}
MARKS = ("erased", "content_erased")
TREE_COLUMNS = ("tenant", "root_id")
SET_BY_DATABASE = ("id",)

COLUMNS: tuple[str, ...] = tuple(TraceEvent._meta.fields_db_projection.values())
LINE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Line))
CHECKED: tuple[str, ...] = tuple(STORED_AS.get(name, name) for name in LINE_FIELDS)
SEALED_FIELDS: tuple[str, ...] = tuple(name for name in LINE_FIELDS if name not in MARKS)
SEALED: tuple[str, ...] = tuple(STORED_AS.get(name, name) for name in SEALED_FIELDS)
MARKED: tuple[str, ...] = tuple(STORED_AS[name] for name in MARKS)
BESIDE: tuple[str, ...] = tuple(
    c for c in COLUMNS if c not in (*SET_BY_DATABASE, *TREE_COLUMNS, *SEALED, *MARKED)
)
INSERTED: tuple[str, ...] = (*TREE_COLUMNS, *BESIDE, *SEALED)
FIGURES: tuple[str, ...] = tuple(f.name for f in fields(Line) if f.default is None)
UUID_COLUMNS: tuple[str, ...] = tuple(
    name for name, field in TraceEvent._meta.fields_map.items() if field.field_type is uuid.UUID
)

_sealed = attrgetter(*SEALED_FIELDS)


def inserted_row(tenant: str, root_id: Any, line: Line, **beside: Any) -> tuple:
    """A sealed line as the row `INSERTED` names, with the `BESIDE` columns given by name (null otherwise)."""
    return (tenant, root_id, *(beside.get(name) for name in BESIDE), *_sealed(line))
