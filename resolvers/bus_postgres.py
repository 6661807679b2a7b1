"""Task events across processes: NOTIFY after each write, LISTEN on one dedicated connection per process."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from tortoise.connection import get_connection

from resolvers.bus import FeedLost, Hub
from models import AgentTask
from resolvers.events import TaskNotice, add_publisher, notice_of, remove_publisher

log = logging.getLogger("agentlog.events")

CHANNEL = "agentlog_task_events"
RETRY_SECONDS = (0.5, 1, 2, 5, 10)


async def notify(event: str, task: AgentTask) -> None:
    text = notice_of(event, task).to_text()
    await get_connection("default").execute_query("SELECT pg_notify($1, $2)", [CHANNEL, text])


async def notify_many(events: list[tuple[str, AgentTask]]) -> None:
    texts = [notice_of(event, task).to_text() for event, task in events]
    await get_connection("default").execute_query(
        "SELECT pg_notify($1, t) FROM unnest($2::text[]) WITH ORDINALITY AS n(t, i) ORDER BY i", [CHANNEL, texts]
    )


def connection_settings() -> dict[str, Any]:
    """How the ORM connects, for a connection of our own."""
    client = get_connection("default")
    return {
        "host": client.host,
        "port": client.port,
        "user": client.user,
        "password": client.password,
        "database": client.database,
        "server_settings": dict(client.server_settings),
    }


class Listener:
    """Hands every notification to the hub. When the connection is lost, every subscriber is ended with
    FEED_LOST (events in the gap cannot be told) and the connection is opened again."""

    def __init__(self, hub: Hub, settings: dict[str, Any]) -> None:
        self.hub = hub
        self.settings = settings
        self._conn: asyncpg.Connection | None = None
        self._retry: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        conn = await asyncpg.connect(**self.settings)
        await conn.add_listener(CHANNEL, self._heard)
        conn.add_termination_listener(self._lost)
        self._conn = conn

    def _heard(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        if not self.hub:
            return
        try:
            notice = TaskNotice.from_text(payload)
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed notification on %s", CHANNEL)
            return
        self.hub.deliver(notice)

    def _lost(self, conn: Any) -> None:
        if self._stopping:
            return
        log.warning("lost the connection that listens for task events; subscribers are told and it is reopened")
        self._conn = None
        self.hub.end_all(FeedLost("The server lost its event feed, so this subscription was ended; subscribe again."))
        self._retry = asyncio.get_running_loop().create_task(self._reopen())

    async def _reopen(self) -> None:
        attempt = 0
        while not self._stopping:
            try:
                await self.start()
                log.info("listening for task events again")
                return
            except (OSError, asyncpg.PostgresError) as exc:
                delay = RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)]
                log.warning("could not reopen the event listener (%s); trying again in %ss", exc, delay)
                attempt += 1
                await asyncio.sleep(delay)

    async def stop(self) -> None:
        self._stopping = True
        if self._retry is not None:
            self._retry.cancel()
        if self._conn is not None:
            await self._conn.close()
            self._conn = None


@asynccontextmanager
async def listening(hub: Hub) -> AsyncIterator[Listener]:
    listener = Listener(hub, connection_settings())
    await listener.start()
    add_publisher(notify, many=notify_many)
    try:
        yield listener
    finally:
        remove_publisher(notify)
        await listener.stop()
