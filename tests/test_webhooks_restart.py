"""A delivery owed is never lost by a crash: a real `agentlog serve` records work for a receiver that is failing,
is killed with SIGKILL while the deliveries are pending, and the server started after it delivers them, signed as
the first attempt was, with the same `webhook-id`."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx
from standardwebhooks import Webhook as Verifier

from models import WebhookDelivery
from tests.receiver import receiving
from tests.servers import start_server
from tests.shop import Client, Shop
from tests.test_webhooks import DEFINE

DEADLINE_S = 60


async def until(check, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not await check():
        assert time.monotonic() < deadline, f"waited {DEADLINE_S} s for {what}"
        await asyncio.sleep(0.1)


async def test_deliveries_pending_when_a_server_is_killed_are_delivered_by_the_next(database, monkeypatch):
    monkeypatch.setenv("AGENTLOG_WEBHOOK_ALLOW_PRIVATE", "true")
    monkeypatch.setenv("AGENTLOG_WEBHOOK_RETRY_S", "0.2")
    monkeypatch.setenv("AGENTLOG_WEBHOOK_TIMEOUT_S", "1")
    with receiving(*[500] * 10_000) as receiver:
        first = await asyncio.to_thread(start_server, database)
        try:
            async with httpx.AsyncClient(base_url=first.url, timeout=30) as http:
                shop = Shop(Client(http))
                await shop.setup()
                hook = (await shop.client.ok(DEFINE, {"input": {"url": receiver.url, "events": [
                    "AgentTaskStarted", "AgentTaskFinished"]}}, shop.kit))["defineWebhook"]
                task = await shop.estimate()

            async def both_tried() -> bool:
                return {r.headers["webhook-id"] for r in receiver.received} == {
                    str(d.id) for d in await WebhookDelivery.filter(tenant=shop.tenant)} != set()

            await until(both_tried, "the first server to try both deliveries")
        finally:
            os.killpg(first.process.pid, signal.SIGKILL)
            first.process.wait(timeout=15)
        pending = await WebhookDelivery.filter(tenant=shop.tenant, delivered_at__isnull=True).count()
        tried = {r.headers["webhook-id"] for r in receiver.received}
        receiver.answers.clear()

        second = await asyncio.to_thread(start_server, database)
        try:
            async def delivered() -> bool:
                return await WebhookDelivery.filter(tenant=shop.tenant, delivered_at__isnull=True).count() == 0

            await until(delivered, "the second server to deliver what was pending")
        finally:
            second.stop()

    assert pending == 2
    last = {r.headers["webhook-id"]: r for r in receiver.received}
    assert set(last) == tried
    told = [Verifier(hook["secret"]).verify(r.body, r.headers) for r in last.values()]
    assert sorted((t["type"], t["data"]["task"]["id"]) for t in told) == [
        ("AgentTaskFinished", task), ("AgentTaskStarted", task)]
    for delivery in await WebhookDelivery.filter(tenant=shop.tenant):
        assert delivery.attempts >= 2 and delivery.status == 200 and delivery.delivered_at is not None
