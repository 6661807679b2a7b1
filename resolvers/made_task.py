"""Where a new task sits in its tree, by one rule for `startTask` and for OTLP placing; and a task that placing
OTLP spans makes, before it is stored: the columns it is stored with, and nothing else.

The code that files its lines, moves its tree's head and tells its events reads a made task as it reads an
`AgentTask`; making one costs a fraction of a model instance, which counts when a trace makes hundreds.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, fields
from datetime import datetime
from operator import attrgetter
from typing import Any

from models.chain import GENESIS


@dataclass(frozen=True, slots=True)
class Position:
    """A task's place in its tree."""

    parent_id: uuid.UUID | None
    root_id: uuid.UUID
    depth: int
    sequence: int
    path: str


def position(task_id: uuid.UUID, parent: Any | None, siblings: int = 0) -> Position:
    """Where a new task sits: a root of its own, or the next of `parent`'s children after its `siblings`."""
    if parent is None:
        return Position(None, task_id, 0, 1, str(task_id))
    return Position(parent.id, parent.root_id, parent.depth + 1, siblings + 1, f"{parent.path}/{task_id}")


@dataclass(slots=True)
class MadeTask:
    """Its fields are the `agent_task` columns it is stored with; COLUMNS lists them."""

    id: uuid.UUID
    tenant: str
    agent: str
    skill: str
    cause: str
    given: str | None
    requester_id: str | None
    actor_id: str
    status: str
    outcome: str | None
    result: str | None
    started_at: datetime
    ended_at: datetime | None
    session: str | None
    parent_id: uuid.UUID | None
    root_id: uuid.UUID
    depth: int
    sequence: int
    path: str
    chain_length: int = 0
    chain_head: str = GENESIS
    withheld: str | None = None


COLUMNS = tuple(column.name for column in fields(MadeTask))
IDS = tuple(COLUMNS.index(name) for name in ("id", "parent_id", "root_id"))
_columns = attrgetter(*COLUMNS)


def stored_row(task: MadeTask) -> tuple:
    """The task as the row COLUMNS names; ids as text."""
    row = list(_columns(task))
    for at in IDS:
        if row[at] is not None:
            row[at] = str(row[at])
    return tuple(row)
