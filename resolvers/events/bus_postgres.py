"""Task events across processes: NOTIFY after each write, LISTEN on one dedicated connection per process.

Events published together travel packed, several notices to a notification, so a trace of hundreds of tasks
costs each listening process a few dozen notifications rather than one per event.

With read replicas the same connection also carries their fences and this process's heartbeats
(resolvers/events/replicas.py): notifications reach a listener in the order their transactions committed, so a heartbeat
heard back means every fence committed before it was sent has been heard too."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import orjson
from tortoise.connection import get_connection

from models import hosts
from resolvers.events import replicas
from resolvers.events.bus import FeedLost, Hub
from models import AgentTask
from resolvers.events.notices import TaskNotice, add_publisher, notice_of, notices_json, remove_publisher

log = logging.getLogger("agentlog.events")

CHANNEL = "agentlog_task_events"
PROCESS = os.urandom(6).hex()
RETRY_SECONDS = (0.5, 1, 2, 5, 10)
PAYLOAD_BYTES = 7999


async def notify(event: str, task: AgentTask, share: int | None = None) -> None:
    text = notice_of(event, task, share).to_text()
    await get_connection("default").execute_query("SELECT pg_notify($1, $2)", [CHANNEL, text])


async def notify_many(events: list[tuple[str, AgentTask]]) -> None:
    await get_connection("default").execute_query(
        "SELECT pg_notify($1, t) FROM unnest($2::text[]) WITH ORDINALITY AS n(t, i) ORDER BY i",
        [CHANNEL, packed(notices_json(events))],
    )


def packed(notices: list[bytes]) -> list[str]:
    """Notices in order, as few payloads as PostgreSQL's limit allows: a notice alone as itself, several as a
    JSON array of at most PAYLOAD_BYTES."""
    payloads, run, size = [], [], 1
    for notice in notices:
        if run and size + len(notice) + 1 > PAYLOAD_BYTES:
            payloads.append(_payload(run))
            run, size = [], 1
        run.append(notice)
        size += len(notice) + 1
    if run:
        payloads.append(_payload(run))
    return payloads


def _payload(notices: list[bytes]) -> str:
    return (notices[0] if len(notices) == 1 else b"[" + b",".join(notices) + b"]").decode()


def heard(payload: str) -> list[TaskNotice]:
    """The notices of one notification: one, or an array of them."""
    raw = orjson.loads(payload)
    return [TaskNotice.from_json(item) for item in raw] if isinstance(raw, list) else [TaskNotice.from_json(raw)]


def connection_settings() -> dict[str, Any]:
    """How the ORM connects, for a connection of our own: to the same host, or to whichever of the same hosts
    `target_session_attrs` accepts when the URL names several (models/hosts.py)."""
    client = get_connection("default")
    return {
        "host": getattr(client, "hosts", client.host),
        "port": getattr(client, "ports", client.port),
        "user": client.user,
        "password": client.password,
        "database": client.database,
        "server_settings": dict(client.server_settings),
        "target_session_attrs": client.extra.get("target_session_attrs"),
        "timeout": client.extra.get("timeout"),
    }


class Listener:
    """Hands every notification to the hub. When the connection is lost, every subscriber is ended with
    FEED_LOST (events in the gap cannot be told) and the connection is opened again."""

    def __init__(self, hub: Hub, settings: dict[str, Any]) -> None:
        self.hub = hub
        self.settings = settings
        self._conn: asyncpg.Connection | None = None
        self._retry: asyncio.Task[None] | None = None
        self._beating: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        conn = await hosts.connect(**self.settings)
        await conn.add_listener(CHANNEL, self._heard)
        conn.add_termination_listener(self._lost)
        routing = replicas.routing()
        if routing is not None:
            await conn.add_listener(replicas.FENCE_CHANNEL, self._heard_replicas)
            since = replicas.lsn_value(await conn.fetchval("SELECT pg_current_wal_lsn()::text"))
            routing.heard_fence(None, since)
            self._beating = asyncio.get_running_loop().create_task(self._beat(conn))
        self._conn = conn

    async def _beat(self, conn: asyncpg.Connection) -> None:
        """Sends this process a heartbeat through the database every HEARTBEAT_S; hearing it back renews the lease."""
        while not conn.is_closed():
            payload = orjson.dumps({"beat": PROCESS, "at": time.monotonic()}).decode()
            try:
                await conn.execute("SELECT pg_notify($1, $2)", replicas.FENCE_CHANNEL, payload)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                return
            await asyncio.sleep(replicas.HEARTBEAT_S)

    def _heard_replicas(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        routing = replicas.routing()
        if routing is None:
            return
        try:
            said = orjson.loads(payload)
            if "fence" in said:
                routing.heard_fence(str(said["fence"]), int(said["lsn"]))
            elif said.get("beat") == PROCESS:
                routing.heard_heartbeat(float(said["at"]))
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed notification on %s", replicas.FENCE_CHANNEL)

    def _heard(self, conn: Any, pid: int, channel: str, payload: str) -> None:
        if not self.hub:
            return
        try:
            notices = heard(payload)
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed notification on %s", CHANNEL)
            return
        for notice in notices:
            self.hub.deliver(notice)

    def _lost(self, conn: Any) -> None:
        if self._stopping:
            return
        log.warning("lost the connection that listens for task events; subscribers are told and it is reopened")
        self._conn = None
        routing = replicas.routing()
        if routing is not None:
            routing.lost_bus()
        self.hub.end_all(FeedLost("The server lost its event feed, so this subscription was ended; subscribe again."))
        self._retry = asyncio.get_running_loop().create_task(self._reopen())

    async def _reopen(self) -> None:
        attempt = 0
        while not self._stopping:
            try:
                await self.start()
                log.info("listening for task events again")
                return
            except (OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InternalClientError) as exc:
                delay = RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)]
                log.warning("could not reopen the event listener (%s); trying again in %ss", exc, delay)
                attempt += 1
                await asyncio.sleep(delay)

    async def stop(self) -> None:
        self._stopping = True
        for task in (self._retry, self._beating):
            if task is not None:
                task.cancel()
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
