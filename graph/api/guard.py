"""Declaring a field's group where the field is declared, and building objects with denied fields left null.

A plain field is nulled by `build` when the object is made; a field with a resolver carries the group's
permission class, so its resolver runs only for a caller who reads the group (a denied list is empty).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any, TypeVar

from strawberry.permission import PermissionExtension
from strawberry.types.field import StrawberryField
from strawberry.types.private import is_private

from permissions.access import Group, describe, may_read
from permissions.classes import PERMISSIONS

T = TypeVar("T")


def group_of(field: Any) -> Group | None:
    return (field.metadata or {}).get("group")


class GuardedField(StrawberryField):
    def __call__(self, resolver: Any) -> GuardedField:
        field = super().__call__(resolver)
        permission = PERMISSIONS.get(group_of(field))
        if permission is not None:
            field.extensions.append(PermissionExtension([permission()], use_directives=False, fail_silently=True))
        return field


def guarded(group: Group, description: str, resolver: Callable[..., Any] | None = None, *, then: str = "") -> Any:
    """A field of `group`: its description says who reads it, its metadata lets the builder and tests find it."""
    field = GuardedField(
        description=" ".join(part for part in (description, describe(group), then) if part),
        metadata={"group": group},
        extensions=[],
    )
    return field(resolver) if resolver is not None else field


def _plain_fields(cls: type) -> dict[str, Group]:
    cached = cls.__dict__.get("_guarded_plain")
    if cached is None:
        cached = {
            f.python_name: group
            for f in cls.__strawberry_definition__.fields
            if f.base_resolver is None and (group := group_of(f)) is not None
        }
        setattr(cls, "_guarded_plain", cached)
    return cached


def build(cls: type[T], groups: frozenset[Group], **values: Any) -> T:
    """Builds `cls` from values, nulling every plain field whose group the caller may not read."""
    for name, group in _plain_fields(cls).items():
        if not may_read(groups, group):
            values[name] = None
    return cls(groups=groups, **values)


def built_whole(
    cls: type[T],
    source: str,
    readers: Mapping[str, Callable[[Any], Any]] | None = None,
    row_readers: Mapping[str, Callable[[Any], Any]] | None = None,
) -> Callable[[Any, frozenset[Group]], T]:
    """Makes `cls` from (row, groups) with every plain field read up front, the row kept as `source`.

    The stock path's counterpart of graph/fast/lazy.py's lazy views, with the same readers: `readers[name]` reads
    from an object holding the row and the groups, `row_readers[name]` from the row, any other field is the row's
    attribute of the same name.
    """
    readers, row_readers = readers or {}, row_readers or {}
    names = [
        f.python_name for f in cls.__strawberry_definition__.fields  # type: ignore[attr-defined]
        if f.base_resolver is None and not is_private(f.type)
    ]

    def make(row: Any, groups: frozenset[Group]) -> T:
        held = SimpleNamespace(**{source: row}, groups=groups)
        values = {
            name: readers[name](held) if name in readers
            else row_readers[name](row) if name in row_readers
            else getattr(row, name)
            for name in names
        }
        return build(cls, groups, **{source: row}, **values)

    return make
