"""Counting the SQL statements a block of code sends, for assertions that a read does not grow with its data."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tortoise.connection import get_connection

STATEMENT_METHODS = ("execute_query", "execute_query_dict", "execute_insert", "execute_many", "execute_script")


@contextmanager
def counted() -> Iterator[list[str]]:
    """Every statement sent through the tortoise connection while the block runs."""
    cls = type(get_connection("default"))
    originals = {name: getattr(cls, name) for name in STATEMENT_METHODS}
    sent: list[str] = []

    def counting(original: Callable) -> Callable:
        async def run(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            sent.append(query)
            return await original(self, query, *args, **kwargs)

        return run

    for name, original in originals.items():
        setattr(cls, name, counting(original))
    try:
        yield sent
    finally:
        for name, original in originals.items():
            setattr(cls, name, original)
