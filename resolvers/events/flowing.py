"""Task events flowing to this process's subscribers while the server runs: across processes over LISTEN/NOTIFY
on PostgreSQL (`bus_postgres.py`), straight to this process's hub otherwise."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from resolvers.events.bus import HUB, deliver_here
from resolvers.events.bus_postgres import listening
from resolvers.events.notices import add_publisher, remove_publisher


@asynccontextmanager
async def running(dialect: str) -> AsyncIterator[None]:
    if dialect == "postgres":
        async with listening(HUB):
            yield
        return
    add_publisher(deliver_here)
    try:
        yield
    finally:
        remove_publisher(deliver_here)
