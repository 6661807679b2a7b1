"""The pages a task's list fields answer: their arguments checked against the task, and the tree's record key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from models.errors import BadInput
from resolvers.read import pages
from resolvers.read.pages import Page, RecordKey
from resolvers.read.rows_seen import parse_id
from resolvers.read.rows import TaskRow


async def children_page(context: Any, row: TaskRow, first: int | None, after: str | None) -> Page:
    """`after` is one of the task's children; the page starts past its sequence number."""
    at = pages.page("children", first)
    if after is None:
        return at
    child = await _task(context, after)
    if child is None or child.parent_id != row.id:
        raise BadInput("children: after is not the id of one of this task's children.", field="after")
    return Page(at.first, child.sequence)


def subtree_slice(rows: list[Any], first: int | None, after: str | None) -> list[Any]:
    """A page of the task's subtree, in its depth-first order, starting past `after` (a task under it)."""
    at = pages.page("subtree", first)
    if after is not None:
        tid = parse_id(after)
        position = next((i for i, r in enumerate(rows) if r.id == tid), None)
        if position is None:
            raise BadInput("subtree: after is not the id of a task under this one.", field="after")
        rows = rows[position + 1 :]
    if at.first is not None:
        return rows[: at.first]
    return list(pages.capped("subtree", rows, at))


async def calls_page(context: Any, row: TaskRow, first: int | None, after: str | None) -> Page:
    at = pages.page("calls", first)
    if after is None:
        return at
    call_id = parse_id(after)
    if call_id is None or not await pages.is_call_of(context.loaders.tenant, row.id, call_id):
        raise BadInput("calls: after is not the id of one of this task's meter rows.", field="after")
    return Page(at.first, call_id)


async def record_key(context: Any, root_id: Any) -> RecordKey:
    """The tree's root and, when the caller reads only some of its tasks, those tasks. The tree's tasks are read
    only when what the caller reads depends on the task."""
    same = await context.access.same_groups()
    if same is not None:
        return root_id, (None if same else frozenset())
    tasks = await context.loaders.tree.get(root_id)
    groups = await context.loaders.readable(context.access, tasks)
    readable = frozenset(task.id for task in tasks if groups.get(task.id))
    return root_id, (None if len(readable) == len(tasks) else readable)


async def line_groups(context: Any, root_id: Any) -> Callable[[Any], frozenset]:
    """What the caller reads on each line of the tree's record: its task's groups, one for all when every task's
    are the same (then no line's task id is looked up: a driver's UUID compares slowly with the dictionary's)."""
    same = await context.access.same_groups()
    if same is None:
        groups = await context.loaders.readable(context.access, await context.loaders.tree.get(root_id))
        distinct = set(groups.values())
        if len(distinct) != 1:
            return lambda line: groups[line.task_id]
        same = distinct.pop()
    return lambda _: same


async def _task(context: Any, task_id: str) -> TaskRow | None:
    tid = parse_id(task_id)
    return None if tid is None else await context.loaders.task.get(tid)
