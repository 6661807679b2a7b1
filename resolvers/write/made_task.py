"""A new task, by one rule for `startTask` and for a task OTLP placing makes from a span: where it sits in its
tree, the columns it is stored with, what its agent's logging withholds, and its STARTED line.

A made task holds the `agent_task` columns and nothing else. The code that files its lines, moves its tree's
head and tells its events reads it as it reads an `AgentTask`; making one costs a fraction of a model instance,
which counts when a trace makes hundreds.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, fields
from datetime import datetime
from operator import attrgetter
from typing import Any

from models.record.chain import GENESIS
from models.record.vocabulary import LineKind, TaskStatus, WithheldReason
from resolvers.write import sentences
from resolvers.write.append import Step, new_step
from resolvers.write.draft import LineDraft


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
    requester_name: str | None = None
    actor_name: str | None = None
    instructions_sent: str | None = None
    instructions_hash: str | None = None
    skill_version: str | None = None
    about: str | None = None
    trigger: str | None = None
    instruction_set: int | None = None
    limit_micros: int | None = None
    workflow_run: str | None = None
    run_step: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None


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


def started_step(task: MadeTask, started: LineDraft) -> Step:
    """A made task's STARTED line as a step, at its start and withheld as the task is."""
    return new_step(started, str(task.id), task.started_at, task.withheld)


def new_task(tenant: str, agent: str, skill: str, actor: dict[str, str | None], started_at: datetime,
             withheld: WithheldReason | None, parent: Any | None, siblings: int = 0, *,
             task_id: uuid.UUID | None = None,
             requester: dict[str, str | None] | None = None, summary: str | None = None, cause: str = "REQUEST",
             given: str | None = None, instructions_sent: str | None = None, result: str | None = None,
             status: TaskStatus = TaskStatus.RUNNING, ended_at: datetime | None = None, outcome: str | None = None,
             session: str | None = None, **described: Any) -> tuple[MadeTask, LineDraft]:
    """A new task under `parent` after its `siblings` (a root of its own without one), and its STARTED line.

    `withheld` is why its content is not stored, as `withheld.withheld_reason` decides from its agent's
    logging (a caller making many tasks decides it once per agent): then `given`,
    `instructions_sent` and `result` are not stored, and the STARTED line carries no payload. Its session is its
    parent's unless it names one. `described` are the columns that only describe the task (`skill_version`,
    `about`, ...)."""
    task_id = task_id or uuid.uuid4()
    place = position(task_id, parent, siblings)
    task = MadeTask(
        id=task_id, tenant=tenant, agent=agent, skill=skill, cause=cause,
        given=None if withheld else given,
        requester_id=requester["id"] if requester else None,
        requester_name=requester["name"] if requester else None,
        actor_id=actor["id"], actor_name=actor["name"], status=status, outcome=outcome,
        result=None if withheld else result,
        instructions_sent=None if withheld else instructions_sent,
        instructions_hash=hashlib.sha256(instructions_sent.encode("utf-8")).hexdigest()
        if instructions_sent is not None else None,
        started_at=started_at, ended_at=ended_at,
        session=session or (parent.session if parent is not None else None),
        parent_id=place.parent_id, root_id=place.root_id, depth=place.depth, sequence=place.sequence,
        path=place.path, withheld=withheld, **described,
    )
    said = summary or sentences.started(agent, skill, requester, parent is not None)
    return task, LineDraft(LineKind.STARTED, said, task.given)
