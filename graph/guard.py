"""Declaring a field's group where the field is declared, and building objects with denied fields left null."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import strawberry

from permissions.table import Group, describe

T = TypeVar("T")


def guarded(group: Group, description: str, resolver: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """A field of `group`: its description says who reads it, its metadata lets the builder and tests find it."""
    text = f"{description} {describe(group)}"
    if resolver is not None:
        return strawberry.field(resolver=resolver, description=text, metadata={"group": group}, **kwargs)
    return strawberry.field(description=text, metadata={"group": group}, **kwargs)


def group_of(field: Any) -> Group | None:
    return (field.metadata or {}).get("group")


def _plain_fields(cls: type) -> dict[str, Group]:
    cached = cls.__dict__.get("_guarded_plain")
    if cached is None:
        cached = {
            f.python_name: group_of(f)
            for f in cls.__strawberry_definition__.fields
            if f.base_resolver is None and group_of(f) is not None
        }
        setattr(cls, "_guarded_plain", cached)
    return cached


def build(cls: type[T], groups: frozenset[Group], **values: Any) -> T:
    """Builds `cls` from values, nulling every plain field whose group the caller may not read."""
    for name, group in _plain_fields(cls).items():
        if group not in groups:
            values[name] = None
    return cls(groups=groups, **values)
