"""A delivery owed is never lost by a crash: a real `agentlog serve` records work for a receiver that is failing,
is killed with SIGKILL while the deliveries are pending, and the server started after it delivers them, signed as
the first attempts were, with the same `webhook-id`. Both run on a database of their own, so no other test's
server takes part."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx
from standardwebhooks import Webhook as Verifier

from tests.receiver import receiving
from tests.servers import start_server
from tests.shop import Client, Shop
from tests.test_start_up import drop, empty_database
from tests.test_webhooks import DEFINE, HOOKS

DEADLINE_S = 60


async def until(check, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not await check():
        assert time.monotonic() < deadline, f"waited {DEADLINE_S} s for {what}"
        await asyncio.sleep(0.1)


async def test_deliveries_pending_when_a_server_is_killed_are_delivered_by_the_next(database, monkeypatch):
    monkeypatch.setenv("AGENTLOG_WEBHOOK_ALLOW_PRIVATE", "true")
    monkeypatch.setenv("AGENTLOG_WEBHOOK_SENDER", "true")
    monkeypatch.setenv("AGENTLOG_WEBHOOK_RETRY_S", "0.2")
    monkeypatch.setenv("AGENTLOG_WEBHOOK_TIMEOUT_S", "1")
    url, name = await empty_database(database)
    try:
        with receiving(*[500] * 10_000) as receiver:
            first = await asyncio.to_thread(start_server, url)
            try:
                async with httpx.AsyncClient(base_url=first.url, timeout=30) as http:
                    shop = Shop(Client(http))
                    await shop.setup()
                    hook = (await shop.client.ok(DEFINE, {"input": {"url": receiver.url, "events": [
                        "AgentTaskStarted", "AgentTaskFinished"]}}, shop.kit))["defineWebhook"]
                    task = await shop.estimate()

                    async def both_tried() -> bool:
                        [listed] = (await shop.client.ok(HOOKS, {}, shop.kit))["webhooks"]
                        return len(listed["deliveries"]) == 2 and all(
                            d["attempts"] >= 1 for d in listed["deliveries"])

                    await until(both_tried, "the first server to try both deliveries and count the attempts")
            finally:
                os.killpg(first.process.pid, signal.SIGKILL)
                first.process.wait(timeout=15)
            tried = {r.headers["webhook-id"] for r in receiver.received}
            failed = len(receiver.received)
            receiver.answers.clear()

            second = await asyncio.to_thread(start_server, url)
            try:
                async with httpx.AsyncClient(base_url=second.url, timeout=30) as http:
                    client = Client(http)

                    async def delivered() -> bool:
                        [listed] = (await client.ok(HOOKS, {}, shop.kit))["webhooks"]
                        return all(d["deliveredAt"] for d in listed["deliveries"])

                    await until(delivered, "the second server to deliver what was pending")
                    [listed] = (await client.ok(HOOKS, {}, shop.kit))["webhooks"]
            finally:
                second.stop()
    finally:
        await drop(database, name)

    after = receiver.received[failed:]
    assert {r.headers["webhook-id"] for r in after} == tried
    told = [Verifier(hook["secret"]).verify(r.body, r.headers) for r in after]
    assert sorted((t["type"], t["data"]["task"]["id"]) for t in told) == [
        ("AgentTaskFinished", task), ("AgentTaskStarted", task)]
    assert {d["id"] for d in listed["deliveries"]} == tried
    for logged in listed["deliveries"]:
        assert logged["attempts"] >= 2 and logged["status"] == 200
