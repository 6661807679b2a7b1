"""Objects of a strawberry type that read each plain field from their row only when a query asks for it.

A tree read may return tens of thousands of lines while the query asks two fields of each; building
every field of every object up front would cost more than the query. A lazy view holds the row and the
caller's groups; each plain field is a property that reads the row, or answers null when the caller may
not read the field's group (the same rule `graph.guard.build` applies when it builds an object).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter
from typing import Any, TypeVar

from strawberry.types.private import is_private

from graph.guard import group_of

T = TypeVar("T")
Reader = Callable[[Any], Any]


def _guarded(name: str, read: Reader) -> property:
    return property(lambda view: read(view) if name in view.readable else None)


def lazy_view(cls: type[T], source: str, readers: Mapping[str, Reader] | None = None) -> Callable[[Any, frozenset], T]:
    """A subclass of `cls` made from (row, groups), whose row is kept as `source`.

    Each plain field is read through `readers[name](view)` when given, else as the row's attribute of
    the same name. `readable` holds the names of the fields the caller's groups allow, worked out once
    per distinct set of groups.
    """
    readers = readers or {}
    namespace: dict[str, Any] = {}
    groups_of_field: dict[str, Any] = {}
    for field in cls.__strawberry_definition__.fields:  # type: ignore[attr-defined]
        if field.base_resolver is not None or is_private(field.type):
            continue
        name = field.python_name
        groups_of_field[name] = group_of(field)
        namespace[name] = _guarded(name, readers.get(name) or attrgetter(f"{source}.{name}"))
    readable_by_groups: dict[frozenset, frozenset[str]] = {}

    def readable(groups: frozenset) -> frozenset[str]:
        names = readable_by_groups.get(groups)
        if names is None:
            names = frozenset(n for n, g in groups_of_field.items() if g is None or g in groups)
            readable_by_groups[groups] = names
        return names

    def __init__(self: Any, row: Any, groups: frozenset) -> None:
        setattr(self, source, row)
        self.groups = groups
        self.readable = readable(groups)

    namespace["__init__"] = __init__
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
