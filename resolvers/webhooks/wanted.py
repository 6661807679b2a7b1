"""Which webhooks of a tenant want which events, read inside the write's own transaction, in a statement the write
sends anyway (the tree's lock, the agent's logging): a webhook defined or removed by any process is seen by the
next write that begins after it, with no cache to keep right and no statement more while none is defined."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import lru_cache

TASK_EVENTS = (
    "AgentTaskStarted", "AgentTaskFinished", "AgentTaskFailed", "AgentTaskStopped", "AgentWorkErased",
    "AgentTaskStopAsked", "AgentTaskBudgetCrossed",
)
CHAIN_BROKEN = "CHAIN_BROKEN"
STAND_IN = "STAND_IN"
EVENTS = (*TASK_EVENTS, CHAIN_BROKEN, STAND_IN)
"""Every event a webhook may want: the task events, a check that found a fault, spans hung under a stand-in."""

AGGREGATE = {"postgres": "string_agg", "sqlite": "group_concat"}
HOOKS = ('(SELECT {agg}(CAST("hook"."id" AS TEXT) || \':\' || "hook"."events", \'|\') FROM "webhook" AS "hook" '
         'WHERE "hook"."tenant" = ${n})')


@lru_cache(maxsize=16)
def hooks_column(dialect: str, n: int) -> str:
    """A scalar sub-select naming every webhook of the tenant (given as $n) with the events it wants; NULL for
    none."""
    return HOOKS.format(agg=AGGREGATE[dialect], n=n)


@dataclass(frozen=True, slots=True)
class Hooks:
    """The webhooks wanting each event, by id."""

    wanting: dict[str, tuple[uuid.UUID, ...]] = field(default_factory=dict)

    def of(self, event: str) -> tuple[uuid.UUID, ...]:
        return self.wanting.get(event, ())

    def want(self, event: str) -> bool:
        return event in self.wanting

    def __bool__(self) -> bool:
        return bool(self.wanting)


NO_HOOKS = Hooks()


def hooks_of(text: str | None) -> Hooks:
    """The `hooks_column` as read: `id:events|id:events`, each event list between spaces."""
    if not text:
        return NO_HOOKS
    wanting: dict[str, list[uuid.UUID]] = {}
    for item in text.split("|"):
        hook, _, events = item.partition(":")
        for event in events.split():
            wanting.setdefault(event, []).append(uuid.UUID(hook))
    return Hooks({event: tuple(ids) for event, ids in wanting.items()})
