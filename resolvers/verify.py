"""Walking a tree's whole chain, in bounded memory, with the pure checker."""

from __future__ import annotations

import uuid

from models import AgentTask, TraceEvent
from models.chain import ChainChecker, TraceCheck
from resolvers.write_path import line_of

BATCH = 5000


async def verify_tree(root: AgentTask) -> TraceCheck:
    checker = ChainChecker()
    after = 0
    while True:
        batch = await TraceEvent.filter(root_id=root.id, seq__gt=after).order_by("seq").limit(BATCH)
        for event in batch:
            checker.feed(line_of(event))
        if len(batch) < BATCH:
            break
        after = batch[-1].seq
    return checker.finish(root.chain_length, root.chain_head)


async def verify_task(task_id: uuid.UUID) -> TraceCheck | None:
    task = await AgentTask.filter(id=task_id).first()
    if task is None:
        return None
    root = task if task.id == task.root_id else await AgentTask.get(id=task.root_id)
    return await verify_tree(root)
