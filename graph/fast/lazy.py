"""Objects of a strawberry type that read each plain field from their row only when a query asks for it.

A tree read may return tens of thousands of lines while the query asks two fields of each; building
every field of every object up front would cost more than the query. A lazy view holds the row and the
caller's groups; each plain field is a property that reads the row, or answers null when the caller may
not read the field's group (the same rule `graph.api.guard.build` applies when it builds an object).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Any, TypeVar

from strawberry.types.private import is_private

from graph.api.guard import group_of
from permissions.access import may_read

T = TypeVar("T")
Reader = Callable[[Any], Any]


def _guarded(name: str, read: Reader) -> property:
    return property(lambda view: read(view) if name in view.readable else None)


def _of_row(source: str, read: Reader) -> Reader:
    row = attrgetter(source)
    return lambda view: read(row(view))


def _of_row_and_groups(source: str, read: Callable[[Any, frozenset], Any]) -> Reader:
    row = attrgetter(source)
    return lambda view: read(row(view), view.groups)


def lazy_view(
    cls: type[T],
    source: str,
    readers: Mapping[str, Reader] | None = None,
    row_readers: Mapping[str, Reader] | None = None,
    group_readers: Mapping[str, Callable[[Any, frozenset], Any]] | None = None,
) -> Callable[[Any, frozenset], T]:
    """A subclass of `cls` made from (row, groups), whose row is kept as `source`.

    Each plain field is read through `readers[name](view)` when given, through `row_readers[name](row)`
    when given, through `group_readers[name](row, groups)` when given, else as the row's attribute of the same
    name. `readable` holds the names of the fields the caller's groups allow, worked out once per distinct set
    of groups. The class keeps, as `row_readers`, how each field not needing the view is read from the row
    alone, as `row_group_readers` those read from the row and the caller's groups, and `readable_names(groups)`,
    so that a list of views can be answered from its rows without making them (graph/fast/execution.py).
    """
    readers, group_readers = readers or {}, group_readers or {}
    namespace: dict[str, Any] = {}
    groups_of_field: dict[str, Any] = {}
    by_row: dict[str, Reader] = {}
    by_row_and_groups: dict[str, Callable[[Any, frozenset], Any]] = {}
    for field in cls.__strawberry_definition__.fields:  # type: ignore[attr-defined]
        if field.base_resolver is not None or is_private(field.type):
            continue
        name = field.python_name
        groups_of_field[name] = group_of(field)
        if name in readers:
            namespace[name] = _guarded(name, readers[name])
            continue
        if name in group_readers:
            by_row_and_groups[name] = group_readers[name]
            namespace[name] = _guarded(name, _of_row_and_groups(source, group_readers[name]))
        elif row_readers and name in row_readers:
            by_row[name] = row_readers[name]
            namespace[name] = _guarded(name, _of_row(source, row_readers[name]))
        else:
            by_row[name] = attrgetter(name)
            namespace[name] = _guarded(name, attrgetter(f"{source}.{name}"))
    readable_by_groups: dict[frozenset, frozenset[str]] = {}

    def readable(groups: frozenset) -> frozenset[str]:
        names = readable_by_groups.get(groups)
        if names is None:
            names = frozenset(n for n, g in groups_of_field.items() if may_read(groups, g))
            readable_by_groups[groups] = names
        return names

    def __init__(self: Any, row: Any, groups: frozenset) -> None:
        setattr(self, source, row)
        self.groups = groups
        self.readable = readable(groups)

    namespace["__init__"] = __init__
    namespace["row_readers"] = by_row
    namespace["row_group_readers"] = by_row_and_groups
    namespace["readable_names"] = staticmethod(readable)
    namespace["__doc__"] = f"A {cls.__name__} that reads its fields from its row when asked."
    return type(f"Lazy{cls.__name__}", (cls,), namespace)


class Views(Sequence[T]):
    """Lazy views of many rows, each made when it is read.

    A query reading a whole tree's lines reads each line once; a view made for the read and dropped
    after it never accumulates, so tens of thousands of lines cost the garbage collector nothing.
    """

    __slots__ = ("make", "rows", "groups")

    def __init__(self, make: Callable[[Any, frozenset], T], rows: Sequence[Any], groups: Callable[[Any], frozenset]) -> None:
        self.make = make
        self.rows = rows
        self.groups = groups

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.make(row, self.groups(row)) for row in self.rows[index]]
        row = self.rows[index]
        return self.make(row, self.groups(row))

    def __iter__(self) -> Iterator[T]:
        make, groups = self.make, self.groups
        for row in self.rows:
            yield make(row, groups(row))
