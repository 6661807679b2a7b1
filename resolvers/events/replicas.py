"""Reads from PostgreSQL streaming replicas (AGENTLOG_READ_DATABASE_URLS), and when a replica may answer one.

A watcher samples the primary's WAL position and every replica's replayed position a few times a second. A
replica that has replayed past the primary's position sampled at time t holds everything committed before t:
its lag is the time since the newest such sample, measured the same way whether the primary is busy or idle.

A replica answers a read only when all of these hold, else the primary answers it:
- it answered the watcher's last probe (a replica down or gone is left out within WATCH_S + PROBE_TIMEOUT_S);
- its lag is under AGENTLOG_REPLICA_MAX_LAG_S;
- it has replayed past the request's consistency token, if the request sent one;
- it has replayed past the tenant's fence: the primary's position after the tenant's last erasure, forgetting or
  policy change (and past the position at which this process last started listening, for every tenant);
- this process holds the lease: it heard back, within LEASE_S, a heartbeat it sent through the bus after which no
  fence can be still on its way to it (see docs/scale.md, "Read replicas").
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

import orjson
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection, get_connections

from models import db
from models.errors import BadInput
from resolvers import metrics
from models.settings import Settings, listed

log = logging.getLogger("agentlog.replicas")

WATCH_S = 0.2
PROBE_TIMEOUT_S = 1.0
HEARTBEAT_S = 0.2
LEASE_S = 1.0
FENCE_WAIT_S = LEASE_S + 0.1
PRIMARY = "primary"
FENCE_CHANNEL = "agentlog_replicas"


def lsn_value(text: str) -> int:
    """PostgreSQL's `X/Y` WAL position as one number; ValueError for anything else."""
    high, _, low = text.partition("/")
    if not high or not low or len(high) > 8 or len(low) > 8:
        raise ValueError(text)
    return (int(high, 16) << 32) + int(low, 16)


def lsn_text(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


def token_value(header: str | None) -> int | None:
    """The WAL position a request's X-Agentlog-Consistency names (None without one); BAD_INPUT if malformed."""
    if header is None:
        return None
    try:
        return lsn_value(header.strip())
    except ValueError:
        raise BadInput(
            "X-Agentlog-Consistency should be a token this server answered a write with, sent back as it came.",
            field="X-Agentlog-Consistency",
        ) from None


async def announce_fence(tenant: str, lsn: int) -> None:
    """Tells every process, over the event bus's connection, that no replica may answer `tenant` until it has
    replayed past `lsn`."""
    payload = orjson.dumps({"fence": tenant, "lsn": lsn}).decode()
    await get_connection("default").execute_query("SELECT pg_notify($1, $2)", [FENCE_CHANNEL, payload])


@dataclass
class Replica:
    name: str
    where: str
    client: BaseDBAsyncClient
    up: bool = False
    replayed: int = 0
    caught_up_at: float = float("-inf")

    def lag_s(self, now: float) -> float:
        return now - self.caught_up_at


@dataclass
class Routing:
    """This process's replicas, what it knows of them, and the fences it has heard."""

    replicas: list[Replica]
    max_lag_s: float
    primary: BaseDBAsyncClient | None = None
    samples: deque[tuple[float, int]] = field(default_factory=deque)
    fences: dict[str, int] = field(default_factory=dict)
    everyone: int = 0
    leased_until: float = float("-inf")
    _turn: Iterator[int] = field(default_factory=itertools.count)

    def node_for(self, tenant: str | None, token: int | None = None, since: float | None = None) -> Replica | None:
        """The replica to answer a read of `tenant`'s rows with, or None for the primary. `since`: only a replica
        holding everything committed before that moment (time.monotonic())."""
        now = time.monotonic()
        if now >= self.leased_until:
            return None
        floor = max(self.everyone, self.fences.get(tenant or "", 0), token or 0)
        fit = [
            replica for replica in self.replicas
            if replica.up and replica.replayed >= floor and replica.lag_s(now) < self.max_lag_s
            and (since is None or replica.caught_up_at >= since)
        ]
        return fit[next(self._turn) % len(fit)] if fit else None

    def heard_fence(self, tenant: str | None, lsn: int) -> None:
        if tenant is None:
            self.everyone = max(self.everyone, lsn)
        else:
            self.fences[tenant] = max(self.fences.get(tenant, 0), lsn)

    def heard_heartbeat(self, sent_at: float) -> None:
        self.leased_until = max(self.leased_until, sent_at + LEASE_S)

    def lost_bus(self) -> None:
        self.leased_until = float("-inf")

    async def position(self) -> int:
        """The primary's WAL position now: at or past every commit it has acknowledged."""
        assert self.primary is not None
        _, rows = await self.primary.execute_query("SELECT pg_current_wal_lsn()::text AS lsn")
        return lsn_value(rows[0]["lsn"])

    async def watch_once(self) -> None:
        assert self.primary is not None
        now = time.monotonic()
        self.samples.append((now, await self.position()))
        while len(self.samples) > 2 and now - self.samples[1][0] > self.max_lag_s + LEASE_S:
            self.samples.popleft()
        await asyncio.gather(*(self._probe(replica) for replica in self.replicas))
        self._forget_passed_fences()
        for replica in self.replicas:
            metrics.replica_seen(replica.name, replica.up, replica.lag_s(time.monotonic()))

    async def _probe(self, replica: Replica) -> None:
        try:
            _, rows = await asyncio.wait_for(
                replica.client.execute_query("SELECT pg_last_wal_replay_lsn()::text AS lsn"), PROBE_TIMEOUT_S
            )
            replayed = rows[0]["lsn"]
        except Exception as exc:
            if replica.up:
                log.warning("replica %s (%s) left out of reads: %s", replica.name, replica.where, exc)
            replica.up = False
            return
        if replayed is None:
            if replica.up:
                log.warning("replica %s (%s) left out of reads: it is not in recovery", replica.name, replica.where)
            replica.up = False
            return
        replica.replayed = lsn_value(replayed)
        replica.caught_up_at = max(
            (at for at, lsn in self.samples if lsn <= replica.replayed), default=replica.caught_up_at
        )
        if not replica.up:
            log.info("replica %s (%s) answers reads again", replica.name, replica.where)
        replica.up = True

    def _forget_passed_fences(self) -> None:
        if not self.fences:
            return
        slowest = min(replica.replayed for replica in self.replicas)
        for tenant in [tenant for tenant, lsn in self.fences.items() if lsn <= slowest]:
            del self.fences[tenant]

    def down(self, replica: Replica) -> None:
        """A read on `replica` found it gone: it answers nothing until a probe finds it back."""
        if replica.up:
            log.warning("replica %s (%s) failed a read; left out until it answers again", replica.name, replica.where)
        replica.up = False

    async def fence(self, tenant: str, answering: bool = True) -> str:
        """After a change that must not be undone by a replica (erasure, forgetting, policy): no replica answers
        `tenant` in any process until it has replayed past it. Returns the consistency token of the change.
        When `answering` someone, waits FENCE_WAIT_S first, so that every process still holding a lease by then
        has heard the fence."""
        lsn = await self.position()
        self.heard_fence(tenant, lsn)
        await announce_fence(tenant, lsn)
        if answering:
            await asyncio.sleep(FENCE_WAIT_S)
        return lsn_text(lsn)

    @asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        self.primary = get_connection("default")
        for replica in self.replicas:
            await _opened(replica)
        task = asyncio.get_running_loop().create_task(self._watch())
        try:
            yield
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            for replica in self.replicas:
                await replica.client.close()

    async def _watch(self) -> None:
        while True:
            try:
                await self.watch_once()
            except Exception as exc:
                log.warning("could not read the primary's WAL position (%s); replicas answer nothing meanwhile", exc)
                for replica in self.replicas:
                    replica.up = False
            await asyncio.sleep(WATCH_S)


async def _opened(replica: Replica) -> None:
    try:
        await asyncio.wait_for(replica.client.create_connection(with_db=True), PROBE_TIMEOUT_S * 5)
    except Exception as exc:
        log.warning("replica %s (%s) cannot be reached yet (%s); it is probed again", replica.name, replica.where, exc)


def replica_of(number: int, url: str) -> Replica:
    """A client for the replica at `url`, registered under the ORM's default name so that whatever runs while
    it is chosen (queries, transactions, raw SQL) runs on it."""
    config = db.connection(url)
    assert isinstance(config, dict)
    client_class = importlib.import_module(config["engine"]).client_class
    client = client_class(**{**config["credentials"], "connection_name": "default"})
    where = f"{config['credentials'].get('host')}:{config['credentials'].get('port')}"
    return Replica(f"replica{number}", where, client)


_routing: Routing | None = None


def routing() -> Routing | None:
    """The replicas of this process, or None when reads all go to the primary (no AGENTLOG_READ_DATABASE_URLS)."""
    return _routing


@asynccontextmanager
async def serving(chosen: Settings) -> AsyncIterator[None]:
    """Reads may go to the replicas the settings name while inside (nothing happens without any)."""
    global _routing
    urls = listed(chosen.read_database_urls)
    if not urls:
        yield
        return
    _routing = Routing([replica_of(n, url) for n, url in enumerate(urls)], chosen.replica_max_lag_s)
    try:
        async with _routing.watching():
            yield
    finally:
        _routing = None


@contextmanager
def reading_from(replica: Replica | None) -> Iterator[None]:
    """Everything the block runs on the ORM's default connection runs on `replica` (on the primary for None)."""
    if replica is None:
        metrics.answered_by(PRIMARY)
        yield
        return
    metrics.answered_by(replica.name)
    handler = get_connections()
    token = handler.set("default", replica.client)
    try:
        yield
    finally:
        handler.reset(token)


@contextmanager
def on_primary() -> Iterator[None]:
    """Everything the block runs on the ORM's default connection runs on the primary, even within a read a
    replica answers: for the few writes a read makes (a check that found a fault tells the webhooks)."""
    if _routing is None or _routing.primary is None:
        yield
        return
    handler = get_connections()
    token = handler.set("default", _routing.primary)
    try:
        yield
    finally:
        handler.reset(token)
