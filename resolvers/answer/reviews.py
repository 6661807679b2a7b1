"""Reviews (SPEC 9.3): a person who may read a task's sentences records their verdict on it, as a REVIEWED line
of its tree's record and a `review` row, in one transaction through the write path.

A task is reviewed once it has ended: the REVIEWED line follows its ENDED line. Work still running answers
WORK_RUNNING, as erasure does.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from tortoise.exceptions import DoesNotExist

from models import AgentTask, Review
from models.errors import BadInput, Forbidden, NotFound, WorkRunning
from models.record.vocabulary import LineKind, ReviewVerdict, TaskStatus
from permissions.access import Access, Group
from permissions.principal import Principal
from resolvers.write import checks, sentences
from resolvers.write.append import append_many, keyed_unit, lock_tree, new_step, now, require_person
from resolvers.write.draft import LineDraft


async def reviewed_task(access: Access, task_id: str | None) -> AgentTask:
    """The task, when the caller may read its sentences; checked before the write begins."""
    tid = checks.uuid_of("task", task_id)
    task = await AgentTask.filter(id=tid, tenant=access.tenant).first()
    groups = await access.groups(task) if task is not None else frozenset()
    if not groups:
        raise NotFound(f"task: no task {tid}.", field="task")
    if Group.SENTENCES not in groups:
        raise Forbidden("reviewTask: you may not read this task's sentences, so you may not review it.", field="task")
    return task


def verdict_of(value: str | None) -> str:
    if value not in ReviewVerdict.__members__:
        raise BadInput(f"verdict: a review is APPROVED, REJECTED or NOTED, not {value}.", field="verdict")
    return value


async def review_task(access: Access, data: dict[str, Any]) -> Review:
    person = require_person(access.principal, "reviewTask")
    task = await reviewed_task(access, data.get("task"))
    verdict = verdict_of(data.get("verdict"))
    note = checks.text("note", data.get("note"), checks.LINE_CHARS)

    async with keyed_unit(person, "reviewTask", data) as unit:
        if unit.first is None:
            review = await add_review(task, verdict, data.get("score"), note, person, None, unit.conn)
            unit.answered(str(review.id))
    if unit.first is not None:
        return await Review.get(id=unit.first, tenant=person.tenant)
    return review


async def add_review(task: AgentTask, verdict: str, score: float | None, note: str | None, by: Principal,
                     evaluator: str | None, conn: Any) -> Review:
    """The REVIEWED line and the review row, under the tree's lock; the task must have ended."""
    try:
        root = await lock_tree(task.root_id, task.tenant, conn)
    except DoesNotExist as exc:
        raise NotFound(f"task: no task {task.id}.", field="task") from exc
    status = await AgentTask.filter(id=task.id, tenant=task.tenant).using_db(conn).values_list("status", flat=True)
    if not status:
        raise NotFound(f"task: no task {task.id}.", field="task")
    if status[0] == TaskStatus.RUNNING:
        raise WorkRunning(f"task: task {task.id} is still running; review it once it has ended.", field="task")
    at = now()
    person = {"id": by.sub, "name": by.name}
    summary = sentences.reviewed(verdict, person, score, note, evaluator)
    step = new_step(LineDraft(LineKind.REVIEWED, summary, None), str(task.id), at)
    await append_many(root, [step], conn)
    review = Review(
        id=uuid.uuid4(), tenant=task.tenant, root_id=root.id, task_id=task.id, seq=root.chain_length,
        verdict=verdict, score=score, note=note, by_id=by.sub, by_name=by.name, evaluator=evaluator, at=at,
    )
    await review.save(using_db=conn, force_create=True)
    return review


async def reviews_of(tenant: str, task_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[Review]]:
    """Each task's reviews, oldest first."""
    found: dict[uuid.UUID, list[Review]] = {}
    for review in await Review.filter(tenant=tenant, task_id__in=list(task_ids)).order_by("at", "seq"):
        found.setdefault(review.task_id, []).append(review)
    return found
