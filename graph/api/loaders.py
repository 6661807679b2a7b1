"""The request's DataLoaders: each batches one kind of read over every object a query touches."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from functools import cached_property
from typing import Any

from strawberry.dataloader import DataLoader

from permissions.access import Access
from resolvers.write import checkpoints
from resolvers.answer import holds, reviews
from resolvers.read import pages, tree
from resolvers.read.pages import Page
from resolvers.read.rows import LINE_COLUMNS, TaskRow

Columns = frozenset[str]
Fetch = Callable[[Sequence[Any]], Awaitable[dict]]


class Loader(DataLoader):
    """A DataLoader that also keeps each value it read by key, so a field whose rows were read ahead
    (see `graph.fast.plan`) finds them without a future, and a whole tree's keys can be read in one batch."""

    def __init__(self, fetch: Fetch, empty: Callable[[], Any]) -> None:
        super().__init__(load_fn=self._batch)
        self.fetch = fetch
        self.empty = empty
        self.known: dict[Hashable, Any] = {}

    async def _batch(self, keys: Sequence[Hashable]) -> list[Any]:
        found = await self.fetch(keys)
        values = [found[key] if key in found else self.empty() for key in keys]
        self.known.update(zip(keys, values))
        return values

    def load(self, key: Hashable) -> Any:
        if key in self.known:
            future = self.loop.create_future()
            future.set_result(self.known[key])
            return future
        return super().load(key)

    async def get(self, key: Hashable) -> Any:
        if key in self.known:
            return self.known[key]
        return await self.load(key)

    async def get_many(self, keys: Iterable[Hashable]) -> list[Any]:
        keys = list(keys)
        if all(key in self.known for key in keys):
            return [self.known[key] for key in keys]
        return list(await self.load_many(keys))

    async def fill(self, keys: Iterable[Hashable]) -> None:
        """Reads every key not yet known, in one batch."""
        missing = [key for key in dict.fromkeys(keys) if key not in self.known]
        if missing:
            await self._batch(missing)

    def remember(self, values: dict[Hashable, Any]) -> None:
        self.known.update(values)


class Loaders:
    """Built per request for one tenant; a loader caches what it read for the rest of the request, and is made
    when the request first asks for it (a kit's write asks for none)."""

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self._pages: dict[tuple, Loader] = {}
        self._trace: dict[Columns, Loader] = {}
        self._readable: dict[uuid.UUID, frozenset] = {}
        self._groups: dict[frozenset, frozenset] = {}
        self.read_down: set[uuid.UUID] = set()

    @cached_property
    def task(self) -> Loader:
        return self._loader(tree.tasks_by_id, lambda: None)

    @cached_property
    def children(self) -> Loader:
        return self._loader(tree.children_of, list)

    @cached_property
    def subtree(self) -> Loader:
        return self._loader(tree.subtrees_of, list)

    @cached_property
    def tree(self) -> Loader:
        return self._loader(tree.trees_of, list)

    @cached_property
    def call(self) -> Loader:
        return self._loader(tree.calls_by_id, lambda: None)

    @cached_property
    def steps(self) -> Loader:
        return self._loader(tree.own_steps, tree.Steps)

    @cached_property
    def meter_book(self) -> tree.MeterBook:
        return tree.MeterBook()

    @cached_property
    def meter(self) -> Loader:
        return self._loader(self.meter_book.load, tree.Spend)

    @cached_property
    def child_count(self) -> Loader:
        return self._loader(pages.child_counts, int)

    @cached_property
    def subtree_count(self) -> Loader:
        return self._loader(pages.subtree_counts, int)

    @cached_property
    def checkpoint(self) -> Loader:
        return self._loader(checkpoints.latest, lambda: None)

    @cached_property
    def reviews(self) -> Loader:
        return self._loader(reviews.reviews_of, list)

    @cached_property
    def hold(self) -> Loader:
        return self._loader(holds.holds_of, lambda: None)

    def _loader(self, fetch: Callable[..., Awaitable[dict]], empty: Callable[[], Any], *args: Any) -> Loader:
        async def read(keys: Sequence[Any]) -> dict:
            return await fetch(self.tenant, keys, *args)

        return Loader(read, empty)

    def trace_of(self, columns: Columns = LINE_COLUMNS) -> Loader:
        """Each task's own lines, in seq order, holding `columns` (every column unless told)."""
        if columns not in self._trace:
            self._trace[columns] = self._loader(tree.lines_of_tasks, list, columns)
        return self._trace[columns]

    def _paged(self, fetch: Callable[..., Awaitable[dict]], *args: Any) -> Loader:
        key = (fetch, *args)
        if key not in self._pages:
            self._pages[key] = self._loader(fetch, list, *args)
        return self._pages[key]

    def children_page(self, at: Page) -> Loader:
        """A page of each task's children, keyed by parent id."""
        return self._paged(pages.children_page, at)

    def trace_page(self, columns: Columns, at: Page) -> Loader:
        """A page of each task's own lines, keyed by task id."""
        return self._paged(pages.lines_page, columns, at)

    def record_page(self, columns: Columns, at: Page) -> Loader:
        """A page of each tree's chain, keyed by `pages.RecordKey`."""
        return self._paged(pages.record_page, columns, at)

    def calls_page(self, at: Page) -> Loader:
        """A page of each task's meter rows, keyed by task id."""
        return self._paged(pages.calls_page, at)

    @property
    def trace(self) -> Loader:
        return self.trace_of()

    async def readable(self, access: Access, rows: Sequence[TaskRow | Any]) -> dict[uuid.UUID, frozenset]:
        """The field groups the caller reads on each task, asked of `access` once per task per request."""
        unknown = [row for row in rows if row.id not in self._readable]
        if unknown:
            found = await access.task_groups(unknown)
            self._readable.update((key, self._groups.setdefault(groups, groups)) for key, groups in found.items())
        return self._readable

    async def tasks(self, ids: Sequence[uuid.UUID]) -> list[TaskRow | None]:
        return await self.task.get_many(ids)

