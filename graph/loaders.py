"""The request's DataLoaders: each batches one kind of read over every object a query touches."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any

from strawberry.dataloader import DataLoader

from models import AgentTask
from resolvers import tree


def _keyed(
    tenant: str, fetch: Callable[[str, Sequence[Any]], Awaitable[dict]], empty: Callable[[], Any]
) -> DataLoader:
    async def load(keys: list[Hashable]) -> list[Any]:
        found = await fetch(tenant, keys)
        return [found[key] if key in found else empty() for key in keys]

    return DataLoader(load_fn=load)


class Loaders:
    """Built per request for one tenant; a loader caches what it read for the rest of the request."""

    def __init__(self, tenant: str) -> None:
        self.task = _keyed(tenant, tree.tasks_by_id, lambda: None)
        self.children = _keyed(tenant, tree.children_of, list)
        self.subtree = _keyed(tenant, tree.subtrees_of, list)
        self.tree = _keyed(tenant, tree.trees_of, list)
        self.trace = _keyed(tenant, tree.lines_of_tasks, list)
        self.record = _keyed(tenant, tree.lines_of_trees, list)
        self.calls = _keyed(tenant, tree.calls_of, list)
        self.own_meter = _keyed(tenant, tree.own_meter, tree.Meter)
        self.all_in_meter = _keyed(tenant, tree.all_in_meter, tree.Meter)
        self.own_steps = _keyed(tenant, tree.own_steps, tree.Steps)

    def prime(self, rows: Sequence[AgentTask]) -> None:
        for row in rows:
            self.task.prime(row.id, row)

    async def tasks(self, ids: Sequence[uuid.UUID]) -> list[AgentTask | None]:
        return list(await self.task.load_many(list(ids)))
