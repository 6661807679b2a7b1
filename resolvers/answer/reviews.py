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
from models.line_columns import FIGURES
from models.errors import BadInput, Forbidden, NotFound, WorkRunning
from models.record.vocabulary import LineKind, ReviewVerdict, TaskStatus
from permissions.access import Access, Group
from permissions.principal import Principal
from resolvers.write import checks, sentences
from resolvers.write.append import append_many, keyed_write, lock_tree, new_step, now, require_person

NO_FIGURES = (None,) * len(FIGURES)


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

    async def body(by: Principal, conn: Any) -> Review:
        return await add_review(task, verdict, data.get("score"), note, by, None, conn)

    async def reload(tenant: str, rid: str) -> Review:
        return await Review.get(id=rid, tenant=tenant)

    return await keyed_write(person, "reviewTask", data, body, lambda r: str(r.id), reload)


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
    step = new_step(LineKind.REVIEWED, str(task.id), at, summary, None, NO_FIGURES)
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
