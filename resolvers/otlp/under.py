"""What a placing pass reads of the tasks stored before it that its spans go under, in statements whose number does
not grow with theirs: the tasks; their trees' roots, locked in one statement; then, under those locks, in one
statement, how many children each task has, its last turn, the logging of the agents the pass writes for, and the
tenant's webhooks (resolvers/webhooks/wanted.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from models import AgentTask
from models.db import placeholders
from resolvers.webhooks.wanted import NO_HOOKS, Hooks, hooks_column, hooks_of

CHILDREN = ('SELECT \'children\' AS "of", CAST("parent_id" AS TEXT) AS "key", COUNT(*) AS "n", NULL AS "text" '
            'FROM "agent_task" WHERE "tenant"={} AND "parent_id" IN ({}) GROUP BY "parent_id"')
TURNS = ('SELECT \'turn\' AS "of", CAST("task_id" AS TEXT) AS "key", MAX("turn") AS "n", NULL AS "text" '
         'FROM "llm_call" WHERE "tenant"={} AND "task_id" IN ({}) GROUP BY "task_id"')
LOGGING = ('SELECT \'logging\' AS "of", "name" AS "key", NULL AS "n", "logging" AS "text" FROM "agent" '
           'WHERE "tenant"={} AND "name" IN ({})')
HOOKS = 'SELECT \'hooks\' AS "of", NULL AS "key", NULL AS "n", {} AS "text"'


@dataclass(slots=True)
class Under:
    """The tasks found, by id, and their trees' roots, locked."""

    tasks: dict[uuid.UUID, AgentTask] = field(default_factory=dict)
    roots: dict[uuid.UUID, AgentTask] = field(default_factory=dict)


@dataclass(slots=True)
class Around:
    """Each task's children and last turn (none: absent), each agent's logging, the tenant's webhooks."""

    children: dict[uuid.UUID, int] = field(default_factory=dict)
    turns: dict[uuid.UUID, int] = field(default_factory=dict)
    logging: dict[str, str | None] = field(default_factory=dict)
    hooks: Hooks = NO_HOOKS


async def tasks_under(conn: Any, tenant: str, task_ids: set[uuid.UUID]) -> Under:
    """The tasks of `task_ids` in the tenant that exist, and their roots locked in id order."""
    found = Under()
    if not task_ids:
        return found
    for task in await AgentTask.filter(id__in=list(task_ids), tenant=tenant).using_db(conn):
        found.tasks[task.id] = task
    root_ids = sorted({task.root_id for task in found.tasks.values()})
    if root_ids:
        locked = AgentTask.filter(id__in=root_ids, tenant=tenant).order_by("id").using_db(conn).select_for_update()
        for root in await locked:
            found.roots[root.id] = root
    return found


async def around(conn: Any, tenant: str, task_ids: list[uuid.UUID], agents: list[str]) -> Around:
    """What placing needs besides the tasks, read after their trees are locked: one statement of keyed parts."""
    parts, args = [], []

    def marks(values: list[str]) -> str:
        start = len(args) + 1
        args.extend(values)
        return ",".join(f"${n}" for n in range(start, start + len(values)))

    ids = [str(t) for t in task_ids]
    for part, keys in ((CHILDREN, ids), (TURNS, ids), (LOGGING, agents)):
        if keys:
            parts.append(part.format(marks([tenant]), marks(keys)))
    parts.append(HOOKS.format(hooks_column(conn.capabilities.dialect, len(args) + 1)))
    args.append(tenant)
    found = Around()
    for row in await conn.execute_query_dict(placeholders(conn, " UNION ALL ".join(parts)), args):
        of, key = row["of"], row["key"]
        if of == "children":
            found.children[uuid.UUID(key)] = row["n"]
        elif of == "turn":
            found.turns[uuid.UUID(key)] = row["n"] or 0
        elif of == "logging":
            found.logging[key] = row["text"]
        else:
            found.hooks = hooks_of(row["text"])
    return found
