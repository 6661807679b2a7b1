"""The kit defines and removes webhooks, on its sync and async clients alike, against a real server."""

from __future__ import annotations

import asyncio
import time

import pytest
from standardwebhooks import Webhook as Verifier

from agentlog_kit import AsyncKit, BadInput, Kit, NotFound
from tests.kit_reads import LiveShop
from tests.receiver import receiving
from tests.servers import start_server


@pytest.fixture(scope="module")
def allowing_private(database):
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("AGENTLOG_WEBHOOK_ALLOW_PRIVATE", "true")
        patched.setenv("AGENTLOG_WEBHOOK_SENDER", "true")
        server = start_server(database)
    try:
        yield server
    finally:
        server.stop()


def test_a_webhook_defined_with_the_kit_hears_of_the_kits_work_and_is_removed_with_it(allowing_private):
    shop = LiveShop(allowing_private)
    with receiving() as receiver, Kit(shop.url, shop.kit) as kit:
        kit.register_agent("Estimator", purpose="Estimates bicycle repairs.")
        hook = kit.define_webhook(receiver.url, ["AgentTaskFinished"])
        with kit.task(agent="Estimator", skill="EstimateRepair", actor={"id": "estimator"}) as t:
            t.outcome = "Estimated one hour."
        deadline = time.monotonic() + 30
        while not receiver.received and time.monotonic() < deadline:
            time.sleep(0.05)
        removed = kit.remove_webhook(hook.id)
        with pytest.raises(NotFound):
            kit.remove_webhook(hook.id)

    assert hook.secret.startswith("whsec_") and hook.events == ["AgentTaskFinished"] and hook.url == receiver.url
    [told] = [Verifier(hook.secret).verify(r.body, r.headers) for r in receiver.received]
    assert (told["type"], told["data"]["task"]["id"]) == ("AgentTaskFinished", t.id)
    assert removed is True


def test_the_async_kit_is_refused_a_loopback_url_naming_the_argument(servers):
    shop = LiveShop(servers[0])

    async def define() -> None:
        async with AsyncKit(shop.url, shop.kit) as kit:
            await kit.define_webhook("http://127.0.0.1:9/hooks", ["AgentTaskStarted"])

    with pytest.raises(BadInput) as refused:
        asyncio.run(define())

    assert refused.value.path == "input.url"
