"""The subscribers of this process, each with a bounded queue, and how events reach them.

On SQLite a write's event goes straight to this process's hub. On PostgreSQL it goes out as a NOTIFY and every
process sharing the database, this one included, hears it on its own listening connection and hands it to its
hub (resolvers/events/bus_postgres.py).

Delivering never waits: a subscriber whose queue is full is ended with FELL_BEHIND and its queue dropped, so a
slow or gone subscriber costs a write nothing and never misses an event without being told.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from models import settings
from models.errors import AgentlogError
from models import AgentTask
from resolvers import metrics
from resolvers.events.notices import TaskNotice, notice_of


class FellBehind(AgentlogError):
    code = "FELL_BEHIND"


class FeedLost(AgentlogError):
    code = "FEED_LOST"


def queue_size() -> int:
    return settings.subscriber_queue()


class Feed:
    """One subscriber's events of one tenant, in order, until it ends."""

    def __init__(self, tenant: str, size: int) -> None:
        self.tenant = tenant
        self.size = size
        self._queue: asyncio.Queue[TaskNotice | None] = asyncio.Queue(size + 1)
        self.ended: AgentlogError | None = None

    def offer(self, notice: TaskNotice) -> None:
        if self.ended is not None:
            return
        if self._queue.qsize() >= self.size:
            self.end(FellBehind(
                f"This subscriber fell more than {self.size} events behind, so its subscription was ended; "
                "subscribe again and read the tasks anew."
            ))
            return
        self._queue.put_nowait(notice)

    def end(self, error: AgentlogError) -> None:
        if self.ended is not None:
            return
        self.ended = error
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    def __aiter__(self) -> Feed:
        return self

    async def __anext__(self) -> TaskNotice:
        notice = await self._queue.get()
        if notice is None:
            assert self.ended is not None
            raise self.ended
        return notice


class Hub:
    """This process's subscribers."""

    def __init__(self) -> None:
        self._feeds: set[Feed] = set()

    def __len__(self) -> int:
        return len(self._feeds)

    @property
    def feeds(self) -> tuple[Feed, ...]:
        return tuple(self._feeds)

    def deliver(self, notice: TaskNotice) -> None:
        for feed in list(self._feeds):
            if feed.tenant == notice.tenant:
                feed.offer(notice)

    def end_all(self, error: AgentlogError) -> None:
        for feed in list(self._feeds):
            feed.end(error)

    @asynccontextmanager
    async def subscribe(self, tenant: str, size: int | None = None) -> AsyncIterator[Feed]:
        feed = Feed(tenant, size or queue_size())
        self._feeds.add(feed)
        metrics.SUBSCRIBERS.inc()
        try:
            yield feed
        finally:
            self._feeds.discard(feed)
            metrics.SUBSCRIBERS.dec()


HUB = Hub()


async def deliver_here(event: str, task: AgentTask, share: int | None = None) -> None:
    HUB.deliver(notice_of(event, task, share))
