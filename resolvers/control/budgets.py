"""Budgets that bite: a write whose model calls take a task's all-in spend (everything under it included), or any
ancestor's, past its `limitMicros` is recorded and answers `overBudget`; the first write past 80% and the first
past 100% of each limit are told as AgentTaskBudgetCrossed.

It costs the write no statement of its own. The limits of the written task and of the tasks above it are read
with the task under its tree's lock (the root's row, or the sub-task's re-read); what each has spent is read by
the statement that signs the tree's new head, after the lock is held, so concurrent writers to one tree each
see the spend of those before them, and each crossing is told once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from models import AgentTask
from resolvers.events.notices import publish_task
from resolvers.control import answers
from resolvers.webhooks import outbox
from resolvers.webhooks.wanted import Hooks

SHARES = (80, 100)
"""The marks told, in percent of a limit."""

LIMITS_ABOVE = {
    "postgres": "string_agg(\"above\".\"path\" || ' ' || \"above\".\"limit_micros\", ',')",
    "sqlite": "group_concat(\"above\".\"path\" || ' ' || \"above\".\"limit_micros\", ',')",
}
TASK_WITH_LIMITS = (
    'SELECT "task".*, (SELECT {agg} FROM "agent_task" AS "above" WHERE "above"."tenant" = $1 '
    'AND "above"."root_id" = "task"."root_id" AND "above"."limit_micros" IS NOT NULL '
    'AND substr("task"."path", 1, length("above"."path")) = "above"."path") AS "limits_above" '
    'FROM "agent_task" AS "task" WHERE "task"."id" = $2 AND "task"."tenant" = $3'
)


def task_with_limits(dialect: str) -> str:
    """A sub-task's re-read under the lock, with the limits of it and of every task above it."""
    return TASK_WITH_LIMITS.format(agg=LIMITS_ABOVE[dialect])


@dataclass(frozen=True, slots=True)
class Budget:
    path: str
    limit: int

    @property
    def task_id(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def limits_of(text: str | None) -> tuple[Budget, ...]:
    """The budgets `limits_above` lists, root first."""
    if not text:
        return ()
    budgets = [Budget(path, int(limit)) for path, limit in (item.split(" ") for item in text.split(","))]
    return tuple(sorted(budgets, key=lambda b: len(b.path)))


def of_root(root: Any) -> tuple[Budget, ...]:
    return (Budget(str(root.path), root.limit_micros),) if root.limit_micros is not None else ()


@dataclass(slots=True)
class Spend:
    """The budgets over a write's task, and, once the head is signed, what each had spent as that statement
    saw it: before the write's own meter rows when they are stored by the same statement, after them when they
    were stored before it (`counted`)."""

    budgets: tuple[Budget, ...]
    calls: tuple[str, ...] = ()
    """The ids of the write's meter rows."""
    spent: list[int] = field(default_factory=list)
    counted: bool = True


@lru_cache(maxsize=64)
def spent_returning(dialect: str, budgets: int, first: int, leaving_out: int = 0) -> str:
    """`, (spend of budget 0) AS "spent0", …` for a RETURNING list; its values numbered from `first`. The spend
    leaves out `leaving_out` meter rows by id: the write's own, stored by the same statement, which PostgreSQL
    does not show it but Citus, running each WITH as a step of its own, would."""
    op, _ = MATCH[dialect]
    per = 2 + leaving_out
    sums = []
    for at in range(budgets):
        n = first + per * at
        left_out = f' AND "id" NOT IN ({", ".join(f"${n + 2 + k}" for k in range(leaving_out))})' if leaving_out else ""
        sums.append(f', (SELECT COALESCE(SUM("cost_micros"), 0) FROM "llm_call" WHERE "tenant" = ${n} '
                    f'AND "task_path" {op} ${n + 1}{left_out}) AS "spent{at}"')
    return "".join(sums)


MATCH = {"postgres": ("LIKE", "%"), "sqlite": ("GLOB", "*")}


def spent_args(dialect: str, tenant: str, spend: Spend, left_out: tuple[str, ...] = ()) -> list[Any]:
    wildcard = MATCH[dialect][1]
    return [value for budget in spend.budgets for value in (tenant, budget.path + wildcard, *left_out)]


def read_spent(spend: Spend, row: dict[str, Any], counted: bool) -> None:
    spend.spent = [int(row[f"spent{at}"]) for at in range(len(spend.budgets))]
    spend.counted = counted


@dataclass(frozen=True, slots=True)
class Crossing:
    """A limit's mark passed by one write: the task whose limit it is, and the share, in percent."""

    task_id: str
    share: int
    limit: int
    spent: int


def weigh(spend: Spend, cost: int) -> list[Crossing]:
    """The marks the write's `cost` passed; notes `overBudget` (the deepest task it leaves past its limit)."""
    crossed, over = [], None
    for budget, spent in zip(spend.budgets, spend.spent):
        before = spent - cost if spend.counted else spent
        after = before + cost
        for share in SHARES:
            if before * 100 <= budget.limit * share < after * 100:
                crossed.append(Crossing(budget.task_id, share, budget.limit, after))
        if after > budget.limit:
            over = {"task": budget.task_id, "limitMicros": budget.limit, "spentMicros": after}
    if over is not None:
        answers.note("overBudget", over)
    return crossed


CROSSED = "AgentTaskBudgetCrossed"


async def owe_crossed(conn: Any, tenant: str, hooks: Hooks, crossed: list[Crossing]) -> None:
    """The crossings written to the outbox of the webhooks that want them, in the write's transaction: two
    statements more (the tasks' figures, the deliveries), only for a write that crossed a mark of a tenant with
    such a webhook."""
    if not crossed or not hooks.want(CROSSED):
        return
    rows = {str(row.id): row for row in
            await AgentTask.filter(tenant=tenant, id__in=[c.task_id for c in crossed]).using_db(conn)}
    await outbox.owe(conn, tenant, hooks, [outbox.task_event(CROSSED, rows[c.task_id], c.share) for c in crossed])


async def tell_crossed(tenant: str, crossed: list[Crossing]) -> None:
    """The one place a budget's crossing is told, after the write that passed it."""
    if not crossed:
        return
    rows = {str(row.id): row for row in await AgentTask.filter(tenant=tenant, id__in=[c.task_id for c in crossed])}
    for crossing in crossed:
        await publish_task(CROSSED, rows[crossing.task_id], share=crossing.share)
