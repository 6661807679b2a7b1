"""What a placing pass reads of the tasks stored before it that its spans go under, in statements whose number does
not grow with theirs: the tasks and their trees' roots, locked, in one statement (on SQLite, whose single writer
already holds them, in two); then, under those locks, in one statement, how many children each task has, its last
turn, the logging of the agents the pass writes for, and the tenant's webhooks (resolvers/webhooks/wanted.py).

Each statement's text is the same however many keys it is given (an array on PostgreSQL, a JSON list on SQLite):
the driver prepares it once per connection, and PostgreSQL may plan it once, rather than once for every count of
keys a pass happens to have."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from models import AgentTask
from models.db import keys_for, placeholders_for
from resolvers.webhooks.wanted import NO_HOOKS, Hooks, hooks_column, hooks_of

JSON_IN = ' IN (SELECT "value" FROM json_each(${}))'
TASKS_AND_ROOTS = (
    'WITH "found" AS (SELECT t.* FROM unnest($2::uuid[]) AS w(id) CROSS JOIN LATERAL (SELECT * FROM "agent_task" '
    'WHERE "id"=w.id AND "tenant"=$1 LIMIT 1) t) '
    'SELECT 0 AS "is_root",f.* FROM "found" f UNION ALL '
    'SELECT 1,r.* FROM (SELECT DISTINCT "root_id" FROM "found" ORDER BY "root_id") k CROSS JOIN LATERAL '
    '(SELECT * FROM "agent_task" WHERE "id"=k."root_id" AND "tenant"=$1 LIMIT 1 FOR UPDATE) r'
)
TASKS = 'SELECT * FROM "agent_task" WHERE "tenant"=? AND "id" IN (SELECT "value" FROM json_each(?)) ORDER BY "id"'
CHILDREN = ('SELECT \'children\' AS "of", CAST("parent_id" AS TEXT) AS "key", MAX("sequence") AS "n", '
            'NULL AS "text" FROM "agent_task" WHERE "tenant"=${} AND "parent_id"{} GROUP BY "parent_id"')
TURNS = ('SELECT \'turn\' AS "of", CAST("task_id" AS TEXT) AS "key", MAX("turn") AS "n", NULL AS "text" '
         'FROM "llm_call" WHERE "tenant"=${} AND "task_id"{} GROUP BY "task_id"')
LOGGING = ('SELECT \'logging\' AS "of", "name" AS "key", NULL AS "n", "logging" AS "text" FROM "agent" '
           'WHERE "tenant"=${} AND "name"{}')
HOOKS = 'SELECT \'hooks\' AS "of", NULL AS "key", NULL AS "n", {} AS "text"'
EACH_CHILDREN = ('SELECT \'children\' AS "of", CAST(w.id AS TEXT) AS "key", c.n AS "n", NULL AS "text" '
                 'FROM unnest($2::uuid[]) AS w(id) CROSS JOIN LATERAL (SELECT MAX("sequence") AS n FROM "agent_task" '
                 'WHERE "parent_id"=w.id AND "tenant"=$1) c WHERE c.n IS NOT NULL')
EACH_TURN = ('SELECT \'turn\' AS "of", CAST(w.id AS TEXT) AS "key", t.n AS "n", NULL AS "text" '
             'FROM unnest($2::uuid[]) AS w(id) CROSS JOIN LATERAL (SELECT MAX("turn") AS n FROM "llm_call" '
             'WHERE "task_id"=w.id AND "tenant"=$1) t WHERE t.n IS NOT NULL')


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


@lru_cache(maxsize=2)
def _around(dialect: str) -> str:
    """A task's children are counted by its last child's `sequence` (children are numbered from 1 as they are
    made, under the tree's lock, and only whole trees are ever deleted), which its index holds last. On PostgreSQL
    the tenant and the task ids are given once, and each task's last child and last turn are looked up by
    themselves, at the end of their indexes: a young table has no statistics, and the planner, taking the tenant
    for a row or two, would otherwise count through all its tasks. SQLite numbers its parameters as they come,
    and its planner uses the indexes as the statement is."""
    if dialect == "postgres":
        parts = [EACH_CHILDREN, EACH_TURN, LOGGING.format(1, "=ANY($3::varchar[])"),
                 HOOKS.format(hooks_column(dialect, 1))]
    else:
        parts = [CHILDREN.format(1, JSON_IN.format(2)), TURNS.format(3, JSON_IN.format(4)),
                 LOGGING.format(5, JSON_IN.format(6)), HOOKS.format(hooks_column(dialect, 7))]
    return placeholders_for(dialect, " UNION ALL ".join(parts))


async def tasks_under(conn: Any, tenant: str, task_ids: set[uuid.UUID]) -> Under:
    """The tasks of `task_ids` in the tenant that exist, and their roots locked in id order. On PostgreSQL in one
    statement, each task and each root looked up by itself by its key, the LIMIT keeping the planner from joining
    the lookups into one: a young table has no statistics, and the planner would otherwise go through the tenant's
    tasks for them. The roots come from the statement's lock, as they are once it is held; the tasks as they were
    when it began, as they would be read before it."""
    found = Under()
    if not task_ids:
        return found
    dialect = conn.capabilities.dialect
    ids = keys_for(dialect, sorted(str(t) for t in task_ids))
    if dialect == "postgres":
        for row in await conn.execute_query_dict(TASKS_AND_ROOTS, [tenant, ids]):
            task = AgentTask._init_from_db(**{k: v for k, v in row.items() if k != "is_root"})
            (found.roots if row["is_root"] else found.tasks)[task.id] = task
        return found
    for row in await conn.execute_query_dict(TASKS, [tenant, ids]):
        task = AgentTask._init_from_db(**row)
        found.tasks[task.id] = task
    root_ids = sorted({str(task.root_id) for task in found.tasks.values()})
    if root_ids:
        for row in await conn.execute_query_dict(TASKS, [tenant, keys_for(dialect, root_ids)]):
            root = AgentTask._init_from_db(**row)
            found.roots[root.id] = root
    return found


async def around(conn: Any, tenant: str, task_ids: list[uuid.UUID], agents: list[str]) -> Around:
    """What placing needs besides the tasks, read after their trees are locked: one statement of keyed parts."""
    dialect = conn.capabilities.dialect
    ids = keys_for(dialect, [str(t) for t in task_ids])
    names = keys_for(dialect, list(agents))
    args = [tenant, ids, names] if dialect == "postgres" else [tenant, ids, tenant, ids, tenant, names, tenant]
    found = Around()
    for row in await conn.execute_query_dict(_around(dialect), args):
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
