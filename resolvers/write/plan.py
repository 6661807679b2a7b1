"""A plan of many tasks and lines decided before anything is written, as OTLP placing makes one for a pass, and
the one function that stores it: the tasks made and ended, each tree's lines appended through `append_many`, the
meter rows and reviews beside them, and what the webhooks are owed, all in the caller's transaction."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from models.db import placeholders
from resolvers.webhooks import outbox
from resolvers.webhooks.wanted import NO_HOOKS, Hooks
from resolvers.write import made_task, prices
from resolvers.write.append import Step, append_many, insert_rows, new_step
from resolvers.write.draft import CALL_COLUMNS, LineDraft, meter_row
from resolvers.write.made_task import MadeTask
from resolvers.write.pipeline import Pipeline

BREATHE_EVERY = 64
REVIEW_COLUMNS = ("id", "tenant", "root_id", "task_id", "seq", "verdict", "score", "note", "by_id", "by_name",
                  "evaluator", "at")
EVALUATED_BY = {"id": "kit", "name": None}
ENDS = 'UPDATE "agent_task" SET "status"=$1, "ended_at"=$2 WHERE "tenant"=$3 AND "id"=$4'
CLOSES = ('UPDATE "agent_task" SET "status"=$1, "ended_at"=$2, "outcome"=$3, "result"=$4 '
          'WHERE "tenant"=$5 AND "id"=$6')


@dataclass(frozen=True, slots=True)
class PlannedReview:
    """An evaluator's result on a task's work: a review by the kit, NOTED with its score and label."""

    evaluator: str | None
    score: float | None
    label: str | None
    at: datetime


@dataclass(slots=True)
class PlannedLine:
    """A line a plan appends: its task, its time, its draft, why it is withheld (if it is), its turn on the
    meter (a model call's, None inside a tool), and the review its REVIEWED line records."""

    task: Any
    at: datetime
    draft: LineDraft
    withheld: str | None
    turn: int | None = None
    review: PlannedReview | None = None


@dataclass(slots=True)
class Plan:
    """What one transaction writes: the tasks to make; the tasks stored before that end (`ended`: a status and a
    time; `closed`: with their outcome and result too); the lines in the order they are appended, each tree's
    after its root's head (`roots`, locked or made now); and what the webhooks are owed."""

    tenant: str
    made: list[MadeTask] = field(default_factory=list)
    ended: list[Any] = field(default_factory=list)
    closed: list[Any] = field(default_factory=list)
    lines: list[PlannedLine] = field(default_factory=list)
    roots: dict[uuid.UUID, Any] = field(default_factory=dict)
    owed: list[outbox.Owed] = field(default_factory=list)

    def unpriced(self) -> bool:
        return any(p.draft.call is not None and p.draft.cost_micros is None for p in self.lines)


async def store_plan(conn: Any, db: Pipeline, plan: Plan, hooks: Hooks = NO_HOOKS) -> None:
    """Stores the plan through the pipeline on `conn`: the tasks ended and made, then (once model calls sent
    without a cost are priced) the meter rows, each tree's lines and the reviews; then what the webhooks are owed."""
    tenant = plan.tenant
    if plan.closed:
        closes = [[t.status, t.ended_at, t.outcome, t.result, tenant, str(t.id)] for t in plan.closed]
        db.send(conn.execute_many(placeholders(conn, CLOSES), closes))
    for task in plan.ended:
        db.send(conn.execute_query(placeholders(conn, ENDS), [task.status, task.ended_at, tenant, str(task.id)]))
    if plan.made:
        rows = [made_task.stored_row(task) for task in plan.made]
        db.send(insert_rows(conn, "agent_task", made_task.COLUMNS, rows))
    if plan.unpriced():
        await db.drain()
        await prices.price_drafts(tenant, [(p.draft, p.at) for p in plan.lines], conn)
    await _append(conn, db, plan)
    if hooks and plan.owed:
        await db.drain()
        await outbox.owe(conn, tenant, hooks, plan.owed)


async def _append(conn: Any, db: Pipeline, plan: Plan) -> None:
    calls: list[tuple] = []
    by_root: dict[uuid.UUID, list[Step]] = {}
    reviews: list[tuple[Step, PlannedLine]] = []
    ids: dict[uuid.UUID, str] = {}
    for n, planned in enumerate(plan.lines, 1):
        if n % BREATHE_EVERY == 0:
            await db.breathe()
        task, draft = planned.task, planned.draft
        task_id = ids.get(task.id) or ids.setdefault(task.id, str(task.id))
        call_id = None
        if draft.call is not None:
            call_id = uuid.uuid4()
            calls.append(meter_row(draft, call_id, task, task_id, planned.turn, planned.at).row())
        step = new_step(draft, task_id, planned.at, planned.withheld, call_id)
        by_root.setdefault(task.root_id, []).append(step)
        if planned.review is not None:
            reviews.append((step, planned))
    if calls:
        db.send(insert_rows(conn, "llm_call", CALL_COLUMNS, calls))
    for root_id, steps in by_root.items():
        await append_many(plan.roots[root_id], steps, conn, db)
    if reviews:
        db.send(insert_rows(conn, "review", REVIEW_COLUMNS, [_review_row(plan.tenant, *r) for r in reviews]))


def _review_row(tenant: str, step: Step, planned: PlannedLine) -> tuple:
    """The review at the seq its REVIEWED line was sealed with."""
    task, review = planned.task, planned.review
    return (str(uuid.uuid4()), tenant, str(task.root_id), str(task.id), step.line.seq, "NOTED", review.score,
            review.label, EVALUATED_BY["id"], EVALUATED_BY["name"], review.evaluator, review.at)
