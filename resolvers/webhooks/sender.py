"""The sender: while the server runs, it takes the deliveries that are due, signs each per Standard Webhooks
(`webhook-id`, `webhook-timestamp`, `webhook-signature`, HMAC-SHA256 with the webhook's `whsec_` secret, by the
`standardwebhooks` package) and posts it; a failed one is tried again after a wait twice the one before, until 24
hours after its event, when it is given up. Each attempt is recorded on its row: the delivery log.

Several processes never send one delivery at once: a sender takes due rows under FOR UPDATE SKIP LOCKED (on
PostgreSQL; SQLite has one writer anyway) and moves their `due_at` a lease ahead before it sends, so another
process takes a row only once that lease has passed, when the sender that took it must have died. A delivery is
therefore sent at least once, and after a crash possibly twice, with the same `webhook-id`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
from standardwebhooks import Webhook as Signer
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from models import Webhook, WebhookDelivery, settings
from models.db import placeholders
from models.settings import Settings
from resolvers import metrics
from resolvers.background import repeating
from resolvers.webhooks.addresses import destination

log = logging.getLogger("agentlog.webhooks")

LEASE_TIMEOUTS = 3
"""A taken delivery is its sender's for this many AGENTLOG_WEBHOOK_TIMEOUT_S: longer than one attempt takes."""
GIVE_UP_AFTER = timedelta(hours=24)
LONGEST_WAIT_S = 3600.0
TAKE = 20
TENANTS_AT_ONCE = 8
"""Tenants whose deliveries are sent side by side in one round, so one tenant's slow receiver holds back no other."""
POLL_S = 1.0
ERROR_CHARS = 500

DUE_TENANTS = 'SELECT DISTINCT "tenant" FROM "webhook_delivery" WHERE "due_at" <= $1 ORDER BY "tenant"'
DUE = ('SELECT "id" FROM "webhook_delivery" WHERE "tenant" = $1 AND "due_at" <= $2 ORDER BY "due_at" LIMIT '
       f'{TAKE}')
LOCKING = " FOR UPDATE SKIP LOCKED"


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one attempt came to: the receiver's HTTP status, or why nothing was sent or answered."""

    status: int | None
    error: str | None

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def wait_after(attempts: int) -> timedelta:
    """The wait before the next attempt, after `attempts` failed ones: AGENTLOG_WEBHOOK_RETRY_S, doubled each
    time, at most an hour."""
    return timedelta(seconds=min(LONGEST_WAIT_S, settings.webhook_retry_s() * 2 ** max(0, attempts - 1)))


async def take(tenant: str, now: datetime) -> list[WebhookDelivery]:
    """The tenant's due deliveries no other sender holds, leased to this one."""
    async with in_transaction() as conn:
        locking = LOCKING if conn.capabilities.dialect == "postgres" else ""
        rows = await conn.execute_query_dict(placeholders(conn, DUE + locking), [tenant, now])
        ids = [row["id"] for row in rows]
        if not ids:
            return []
        taken = WebhookDelivery.filter(tenant=tenant, id__in=ids).using_db(conn)
        await taken.update(due_at=now + timedelta(seconds=LEASE_TIMEOUTS * settings.webhook_timeout_s()))
        return await taken


def signed(delivery: WebhookDelivery, secret: str, now: datetime) -> dict[str, str]:
    msg_id = str(delivery.id)
    return {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Signer(secret).sign(msg_id, now, delivery.body),
    }


async def attempt(http: httpx.AsyncClient, delivery: WebhookDelivery, hook: Webhook) -> Attempt:
    """One attempt, signed as it is sent: a receiver refuses a `webhook-timestamp` far from its own clock."""
    why, where = await destination(hook.url)
    if why is not None:
        return Attempt(None, f"not sent: {why}")
    headers = signed(delivery, hook.secret, datetime.now(timezone.utc))
    if where.host is not None:
        headers["Host"] = where.host
    extensions = {"sni_hostname": where.server_name} if where.server_name else None
    try:
        answer = await http.post(where.url, content=delivery.body.encode(), headers=headers, extensions=extensions)
    except httpx.HTTPError as exc:
        return Attempt(None, f"{type(exc).__name__}: {exc}"[:ERROR_CHARS] or type(exc).__name__)
    return Attempt(answer.status_code, None if 200 <= answer.status_code < 300 else f"answered {answer.status_code}")


async def record(delivery: WebhookDelivery, tried: Attempt, now: datetime) -> None:
    """The attempt on the delivery's row: delivered, due again after its wait, or given up."""
    attempts = delivery.attempts + 1
    fields: dict[str, Any] = {"attempts": attempts, "status": tried.status, "error": tried.error}
    if tried.delivered:
        fields.update(delivered_at=now, due_at=None)
        outcome = "delivered"
    else:
        again = now + wait_after(attempts)
        if again > delivery.at + GIVE_UP_AFTER:
            fields.update(gave_up_at=now, due_at=None)
            outcome = "given_up"
            log.warning("gave up webhook delivery %s of %s after %d attempts", delivery.id, delivery.event, attempts)
        else:
            fields.update(due_at=again)
            outcome = "failed"
    await WebhookDelivery.filter(id=delivery.id, tenant=delivery.tenant).update(**fields)
    metrics.webhook_attempt(outcome)


async def deliver(tenant: str, now: datetime | None = None) -> int:
    """One round for one tenant: every due delivery taken, tried and recorded, each webhook's in the order
of their events, the webhooks side by side. Returns how many were tried."""
    when = now or datetime.now(timezone.utc)
    taken = await take(tenant, when)
    if not taken:
        return 0
    hooks = {hook.id: hook for hook in await Webhook.filter(tenant=tenant, id__in=list({d.webhook_id for d in taken}))}
    by_hook: dict[uuid.UUID, list[WebhookDelivery]] = {}
    for delivery in sorted(taken, key=lambda d: (d.at, d.id)):
        by_hook.setdefault(delivery.webhook_id, []).append(delivery)
    async with httpx.AsyncClient(timeout=settings.webhook_timeout_s(), follow_redirects=False) as http:
        async def in_order(hook_id: uuid.UUID, owed: list[WebhookDelivery]) -> None:
            hook = hooks.get(hook_id)
            for delivery in owed:
                tried = await attempt(http, delivery, hook) if hook else Attempt(None, "its webhook was removed")
                await record(delivery, tried, when)

        await asyncio.gather(*(in_order(hook_id, owed) for hook_id, owed in by_hook.items()))
    return len(taken)


async def deliver_due(now: datetime | None = None) -> int:
    """One round for every tenant with deliveries due, `TENANTS_AT_ONCE` tenants side by side."""
    when = now or datetime.now(timezone.utc)
    conn = get_connection("default")
    tenants = [row["tenant"] for row in await conn.execute_query_dict(placeholders(conn, DUE_TENANTS), [when])]
    room = asyncio.Semaphore(TENANTS_AT_ONCE)

    async def one(tenant: str) -> int:
        async with room:
            try:
                return await deliver(tenant, when)
            except Exception:
                log.exception("the webhook deliveries of tenant %s failed this round; they are tried again", tenant)
                return 0

    return sum(await asyncio.gather(*(one(tenant) for tenant in tenants)))


_woken: asyncio.Event | None = None


def wake() -> None:
    """Called by a write that owed a delivery: this process's sender looks soon, not at its next poll."""
    if _woken is not None:
        asyncio.get_running_loop().call_later(0.05, _woken.set)


@asynccontextmanager
async def sending(chosen: Settings) -> AsyncIterator[None]:
    """While the server runs, under its settings: deliveries due are sent, each round after POLL_S or a write that
    owed one; nothing with AGENTLOG_WEBHOOK_SENDER=false."""
    global _woken
    if not chosen.webhook_sender:
        yield
        return
    woken = _woken = asyncio.Event()

    async def work() -> None:
        while await deliver_due():
            pass

    async def pause() -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(woken.wait(), POLL_S)
        woken.clear()

    try:
        async with repeating(chosen, work, pause, log, "the webhook sender failed; it runs again"):
            yield
    finally:
        _woken = None
