"""Webhooks: the shop's kit asks to hear of its work at a receiver of its own, a real HTTP server on loopback.

Each event is written to the outbox with the write that caused it, so what a receiver hears is exactly what was
recorded: signed per Standard Webhooks (checked by the `standardwebhooks` package's own verifier), retried when
the receiver fails, never sent for a write that rolled back. The sender is driven round by round here
(`deliver_due`), as the server's loop drives it.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from prometheus_client import REGISTRY
from tortoise.connection import get_connection

from models import IdempotencyKey, Webhook, WebhookDelivery
from resolvers.webhooks import addresses, hooks, sender
from tests.receiver import receiving, settle_owed
from tests.shop import Shop
from tests.tables import state
from tests.tenant_statements import caller, watched

DEFINE = "mutation($input: WebhookInput!) { defineWebhook(input: $input) { id url events secret } }"
REMOVE = "mutation($id: ID!) { removeWebhook(id: $id) }"
HOOKS = "{ webhooks { id url events secret deliveries { id event attempts status deliveredAt error gaveUpAt } } }"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
"""The secret of the Standard Webhooks specification's own example."""


@pytest.fixture
def private(configure):
    """Receivers on loopback, as the tests' are; retries after a hundredth of a second."""
    configure(webhook_allow_private=True, webhook_retry_s=0.01)


@pytest.fixture(autouse=True)
async def nothing_left_owed():
    yield
    for tenant in await WebhookDelivery.filter(due_at__isnull=False).distinct().values_list("tenant", flat=True):
        await settle_owed(tenant)


async def hooked(client, url: str, *events: str, **fields) -> tuple[Shop, dict]:
    shop = Shop(client)
    await shop.setup()
    hook = (await client.ok(DEFINE, {"input": {"url": url, "events": list(events), **fields}}, shop.kit))["defineWebhook"]
    return shop, hook


def later(seconds: float) -> datetime:
    return datetime.now(timezone.utc) + timedelta(seconds=seconds)


async def log_of(shop: Shop) -> list[dict]:
    return (await shop.client.ok(HOOKS, {}, shop.kit))["webhooks"][0]["deliveries"]


async def test_a_started_task_reaches_the_receiver_signed_as_standard_webhooks_says(client, private):
    with receiving() as receiver:
        shop, hook = await hooked(client, receiver.url, "AgentTaskStarted")
        task = (await shop.start())["id"]

        assert await sender.deliver_due() == 1

    [got] = receiver.received
    [told] = receiver.verified(hook["secret"])
    assert hook["secret"].startswith("whsec_") and hook["events"] == ["AgentTaskStarted"]
    assert {"webhook-id", "webhook-timestamp", "webhook-signature"} <= set(got.headers)
    assert got.headers["webhook-signature"].startswith("v1,")
    assert told["type"] == "AgentTaskStarted"
    assert told["data"]["task"]["id"] == task and told["data"]["task"]["status"] == "RUNNING"
    assert datetime.fromisoformat(told["timestamp"]) <= datetime.now(timezone.utc)
    [logged] = await log_of(shop)
    assert (logged["id"], logged["event"], logged["attempts"], logged["status"]) == (
        got.headers["webhook-id"], "AgentTaskStarted", 1, 200)
    assert logged["deliveredAt"] is not None


async def test_a_secret_given_signs_the_deliveries_and_is_answered_once_only(client, private):
    with receiving() as receiver:
        shop, hook = await hooked(client, receiver.url, "AgentTaskFinished", secret=SECRET)
        await shop.estimate()
        await sender.deliver_due()

    assert hook["secret"] == SECRET
    assert [told["type"] for told in receiver.verified(SECRET)] == ["AgentTaskFinished"]
    listed = (await client.ok(HOOKS, {}, shop.kit))["webhooks"]
    assert [(h["id"], h["secret"]) for h in listed] == [(hook["id"], None)]


async def test_a_receiver_that_fails_once_gets_the_same_delivery_again_and_the_log_counts_two_attempts(
        client, private, configure):
    configure(webhook_retry_s=5)
    with receiving(500) as receiver:
        shop, hook = await hooked(client, receiver.url, "AgentTaskStarted")
        await shop.start()

        await sender.deliver_due()
        [failed] = await log_of(shop)
        assert await sender.deliver_due(later(4)) == 0, "tried again before its wait"
        await sender.deliver_due(later(6))

    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] and first.body == second.body
    assert (failed["attempts"], failed["status"], failed["deliveredAt"]) == (1, 500, None)
    [logged] = await log_of(shop)
    assert (logged["attempts"], logged["status"], logged["error"]) == (2, 200, None)
    assert logged["deliveredAt"] is not None
    assert len(receiver.verified(hook["secret"])) == 2


def attempts_counted(outcome: str) -> float:
    return REGISTRY.get_sample_value("agentlog_webhook_attempts_total", {"outcome": outcome}) or 0


async def test_a_delivery_failing_for_24_hours_is_given_up_and_the_log_says_so(client, private):
    counted = {outcome: attempts_counted(outcome) for outcome in ("failed", "given_up")}
    with receiving(*[503] * 50) as receiver:
        shop, _ = await hooked(client, receiver.url, "AgentTaskStarted")
        await shop.start()
        await sender.deliver_due()
        await sender.deliver_due(later(25 * 3600))
        await sender.deliver_due(later(26 * 3600))

    assert len(receiver.received) == 2
    [logged] = await log_of(shop)
    assert (logged["attempts"], logged["status"], logged["deliveredAt"]) == (2, 503, None)
    assert logged["gaveUpAt"] is not None
    assert {outcome: attempts_counted(outcome) - before for outcome, before in counted.items()} == {
        "failed": 1, "given_up": 1}


async def test_waits_between_attempts_double_up_to_an_hour(configure):
    configure(webhook_retry_s=5)
    assert [sender.wait_after(n).total_seconds() for n in (1, 2, 3, 4, 12)] == [5, 10, 20, 40, 3600]


async def test_a_write_that_rolls_back_sends_nothing(client, private, monkeypatch):
    with receiving() as receiver:
        shop, _ = await hooked(client, receiver.url, "AgentTaskStarted")

        async def refused(*args, **kwargs):
            raise RuntimeError("the database went away after the task was written")

        monkeypatch.setattr(IdempotencyKey, "create", refused)
        body = await client.post("mutation($input: StartTaskInput!) { startTask(input: $input) { id } }",
                                 {"input": {"agent": "Estimator", "skill": "EstimateRepair", "actor": {"id": "e"},
                                            "idempotencyKey": "start-1"}}, shop.kit)
        monkeypatch.undo()
        await sender.deliver_due(later(60))

    assert body["errors"][0]["extensions"]["code"] == "INTERNAL"
    assert receiver.received == []
    assert await WebhookDelivery.filter(tenant=shop.tenant).count() == 0


async def test_a_budget_crossed_by_a_kit_write_reaches_the_receiver_once(client, private):
    with receiving() as receiver:
        shop, hook = await hooked(client, receiver.url, "AgentTaskBudgetCrossed")
        task = (await shop.start(limitMicros=1000))["id"]
        await shop.model_call(task, costMicros=850)
        await shop.model_call(task, costMicros=50)
        await sender.deliver_due()

    [told] = receiver.verified(hook["secret"])
    assert told["type"] == "AgentTaskBudgetCrossed"
    assert (told["data"]["task"]["id"], told["data"]["share"]) == (task, 80)


async def test_a_stop_asked_and_every_end_reach_the_webhook_that_wants_them(client, private):
    with receiving() as receiver:
        shop, hook = await hooked(client, receiver.url, "AgentTaskStopAsked", "AgentTaskStopped", "AgentTaskFailed")
        stopped, failed = (await shop.start())["id"], (await shop.start())["id"]
        await shop.client.ok("mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }",
                             {"input": {"task": stopped, "reason": "The customer collected the bike."}}, shop.noor)
        await shop.end(stopped, status="STOPPED")
        await shop.end(failed, status="FAILED")
        await shop.estimate()
        await sender.deliver_due()

    told = [(t["type"], t["data"]["task"]["id"]) for t in receiver.verified(hook["secret"])]
    assert sorted(told) == sorted([("AgentTaskStopAsked", stopped), ("AgentTaskStopped", stopped),
                                   ("AgentTaskFailed", failed)])


async def test_a_fault_verifyTrace_finds_is_told_once_as_chain_broken(client, private):
    with receiving() as receiver:
        shop, hook = await hooked(client, receiver.url, "CHAIN_BROKEN")
        task = await shop.estimate()
        await get_connection("default").execute_query(
            'UPDATE "trace_event" SET "summary" = \'Estimated three hours.\' WHERE "tenant" = $1 AND "seq" = 2'
            if get_connection("default").capabilities.dialect == "postgres" else
            'UPDATE "trace_event" SET "summary" = \'Estimated three hours.\' WHERE "tenant" = ? AND "seq" = 2',
            [shop.tenant])
        checks = [await shop.verify(task, shop.noor) for _ in range(2)]
        await sender.deliver_due()

    assert [c["intact"] for c in checks] == [False, False]
    [told] = receiver.verified(hook["secret"])
    assert told["type"] == "CHAIN_BROKEN"
    assert (told["data"]["root"], told["data"]["brokenAt"]) == (task, checks[0]["brokenAt"])


async def test_a_webhook_defined_or_changed_elsewhere_is_seen_by_the_next_write(client, private):
    """Another process's change is a committed row: the write reads the webhooks in its own statement, so there
    is no copy here to go stale."""
    with receiving() as receiver:
        shop = Shop(client)
        await shop.setup()
        await shop.start()
        hook = await Webhook.create(id=uuid.uuid4(), tenant=shop.tenant, url=receiver.url, events=" AgentTaskStarted ",
                                    secret=SECRET, created_at=datetime.now(timezone.utc))
        told = (await shop.start())["id"]
        await Webhook.filter(id=hook.id, tenant=shop.tenant).update(events=" CHAIN_BROKEN ")
        await shop.start()
        await sender.deliver_due()

    assert [t["data"]["task"]["id"] for t in receiver.verified(SECRET)] == [told]


async def test_removing_a_webhook_ends_its_deliveries_and_an_unknown_one_is_not_found(client, private):
    with receiving(500) as receiver:
        shop, hook = await hooked(client, receiver.url, "AgentTaskStarted")
        await shop.start()
        await sender.deliver_due()
        assert (await client.ok(REMOVE, {"id": hook["id"]}, shop.kit))["removeWebhook"] is True
        await sender.deliver_due(later(60))

    assert len(receiver.received) == 1
    assert await WebhookDelivery.filter(tenant=shop.tenant).count() == 0
    again = await client.error(REMOVE, {"id": hook["id"]}, shop.kit)
    other = await client.error(REMOVE, {"id": hook["id"]}, Shop(client).kit)
    assert again["extensions"] == other["extensions"] == {"code": "NOT_FOUND", "field": "id"}


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8000/hooks", "http://10.1.2.3/hooks", "https://169.254.169.254/latest/meta-data",
    "http://localhost:9000/hooks", "http://[::1]/hooks", "http://192.168.1.20/hooks", "http://0.0.0.0/hooks",
    "http://[::ffff:127.0.0.1]/hooks", "ftp://example.com/hooks", "example.com/hooks", "http:///hooks",
    "https://user:pw@example.com/hooks",
])
async def test_a_url_on_a_loopback_private_or_link_local_address_or_not_http_is_refused(client, url):
    shop = Shop(client)
    await shop.setup()
    before = await state()

    error = await client.error(DEFINE, {"input": {"url": url, "events": ["AgentTaskStarted"]}}, shop.kit)

    assert error["extensions"] == {"code": "BAD_INPUT", "field": "input.url"}
    assert await state() == before


async def test_a_delivery_to_a_name_that_now_resolves_to_loopback_is_logged_and_not_sent(client, private, configure):
    with receiving() as receiver:
        shop, _ = await hooked(client, receiver.url.replace("127.0.0.1", "localhost"), "AgentTaskStarted")
        await shop.start()
        configure(webhook_allow_private=False)
        await sender.deliver_due()

    assert receiver.received == []
    [logged] = await log_of(shop)
    assert (logged["attempts"], logged["status"], logged["deliveredAt"]) == (1, None, None)
    assert "127.0.0.1" in logged["error"] and logged["error"].startswith("not sent")


async def test_a_delivery_goes_to_the_address_checked_and_the_name_is_not_looked_up_again(client, monkeypatch):
    """The receiver's name resolves, for the check, to an address taken here for a public one; the system's
    resolver has never heard of it, so only a delivery pinned to the checked address can reach it."""
    looked_up = []

    async def lookup(host: str, port: int) -> list[str]:
        looked_up.append(host)
        return ["127.0.0.1"] if host == "hooks.shop.test" else []

    monkeypatch.setattr(addresses, "lookup", lookup)
    monkeypatch.setattr(addresses, "address_refused", lambda address: address != "127.0.0.1")
    with receiving() as receiver:
        named = receiver.url.replace("127.0.0.1", "hooks.shop.test")
        shop, hook = await hooked(client, named, "AgentTaskStarted")
        await shop.start()
        assert await sender.deliver_due() == 1

    [got] = receiver.received
    assert got.headers["Host"] == named.split("/")[2]
    assert [told["type"] for told in receiver.verified(hook["secret"])] == ["AgentTaskStarted"]
    assert looked_up == ["hooks.shop.test", "hooks.shop.test"]


@pytest.mark.parametrize("url, address, pinned, host, server_name", [
    ("https://hooks.shop.test/h?x=1", "93.184.216.34", "https://93.184.216.34/h?x=1", "hooks.shop.test", "hooks.shop.test"),
    ("http://hooks.shop.test:8080/h", "93.184.216.34", "http://93.184.216.34:8080/h", "hooks.shop.test:8080", None),
    ("https://hooks.shop.test:8443/", "2606:2800:220:1::", "https://[2606:2800:220:1::]:8443/", "hooks.shop.test:8443",
     "hooks.shop.test"),
    ("https://93.184.216.34/h", "93.184.216.34", "https://93.184.216.34/h", None, None),
])
async def test_an_https_delivery_is_pinned_with_its_name_as_the_tls_server_name(monkeypatch, url, address, pinned, host,
                                                                                 server_name):
    async def lookup(name: str, port: int) -> list[str]:
        return [address]

    monkeypatch.setattr(addresses, "lookup", lookup)
    assert await addresses.destination(url) == (None, addresses.Destination(pinned, host, server_name))


async def test_a_receiver_that_is_slow_to_answer_holds_back_no_other_tenants_delivery(client, private, configure):
    """The slow receiver's tenant comes first in a round; its answer is held until the other tenant's receiver
    has heard its delivery, or 3 s, well within the delivery's timeout."""
    configure(webhook_timeout_s=20)
    held = threading.Event()
    with receiving(held=held) as slow, receiving() as quick:
        first = Shop(client, tenant=f"shop-a-{uuid.uuid4().hex[:8]}")
        second = Shop(client, tenant=f"shop-b-{uuid.uuid4().hex[:8]}")
        for shop, receiver in ((first, slow), (second, quick)):
            await shop.setup()
            await client.ok(DEFINE, {"input": {"url": receiver.url, "events": ["AgentTaskStarted"]}}, shop.kit)
            await shop.start()

        async def release_once_quick_heard() -> bool:
            for _ in range(300):
                if quick.received:
                    held.set()
                    return True
                await asyncio.sleep(0.01)
            held.set()
            return False

        releasing = asyncio.create_task(release_once_quick_heard())
        assert await sender.deliver_due() == 2
        assert await releasing, "the other tenant's delivery waited for the slow receiver"

    assert len(slow.received) == len(quick.received) == 1


@pytest.mark.parametrize("fields, named", [
    ({"events": []}, "input.events"),
    ({"events": ["AgentTaskStarted", "TaskExploded"]}, "input.events"),
    ({"secret": "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "input.secret"),
    ({"secret": "whsec_not base64!"}, "input.secret"),
    ({"secret": "whsec_c2hvcnQ="}, "input.secret"),
    ({"url": "https://example.com/" + "x" * 2000}, "input.url"),
])
async def test_bad_events_and_secrets_are_refused_naming_the_field(client, private, fields, named):
    shop = Shop(client)
    await shop.setup()
    before = await state()

    error = await client.error(DEFINE, {"input": {"url": "http://127.0.0.1:1/h", "events": ["CHAIN_BROKEN"],
                                                  **fields}}, shop.kit)

    assert error["extensions"] == {"code": "BAD_INPUT", "field": named}
    assert await state() == before


async def test_a_tenant_past_its_most_webhooks_is_refused_and_may_define_again_once_one_is_removed(
        client, private, monkeypatch):
    monkeypatch.setattr(hooks, "MAX_WEBHOOKS", 3)
    shop = Shop(client)
    await shop.setup()
    made = [(await client.ok(DEFINE, {"input": {"url": f"http://127.0.0.1:1/{n}", "events": ["STAND_IN"]}},
                             shop.kit))["defineWebhook"] for n in range(3)]
    before = await state()

    error = await client.error(DEFINE, {"input": {"url": "http://127.0.0.1:1/4", "events": ["STAND_IN"]}}, shop.kit)

    assert error["extensions"] == {"code": "BAD_INPUT", "field": "input.url"}
    assert "3 webhooks" in error["message"]
    assert await state() == before
    await client.ok(REMOVE, {"id": made[0]["id"]}, shop.kit)
    await client.ok(DEFINE, {"input": {"url": "http://127.0.0.1:1/4", "events": ["STAND_IN"]}}, shop.kit)
    assert await Webhook.filter(tenant=shop.tenant).count() == 3


async def test_a_person_may_not_define_a_webhook(client, private):
    shop = Shop(client)
    await shop.setup()

    error = await client.error(DEFINE, {"input": {"url": "http://127.0.0.1:1/h", "events": ["STAND_IN"]}},
                               shop.noor)

    assert error["extensions"]["code"] == "FORBIDDEN"
    assert await Webhook.filter(tenant=shop.tenant).count() == 0


async def sent_ending(shop: Shop) -> list:
    task = (await shop.start())["id"]
    with watched() as sent, caller(shop.tenant):
        await shop.write("endTask", {"task": task, "status": "DONE"})
    return sent


async def test_an_end_costs_no_statement_more_without_a_webhook_wanting_it_and_one_more_with_one(client, private):
    shop = Shop(client)
    await shop.setup()
    none = await sent_ending(shop)
    await client.ok(DEFINE, {"input": {"url": "http://127.0.0.1:1/h", "events": ["AgentTaskStarted"]}}, shop.kit)
    unwanted = await sent_ending(shop)
    await client.ok(DEFINE, {"input": {"url": "http://127.0.0.1:2/h", "events": ["AgentTaskFinished"]}}, shop.kit)
    wanted = await sent_ending(shop)

    assert len(unwanted) == len(none)
    assert len(wanted) == len(none) + 1
    assert [s.sql.startswith('INSERT INTO "webhook_delivery"') for s in wanted].count(True) == 1
    assert not any("webhook_delivery" in s.sql for s in none + unwanted)


async def test_spans_hung_under_a_stand_in_are_told_as_stand_in_and_an_otlp_agents_work_as_its_task_events(
        client, private, configure):
    from resolvers.otlp.sweep import sweep
    from tests.otlp_spans import export, new_span_id, new_trace_id, chat, tool
    from tests.test_otlp_ingest import estimate, post

    configure(otlp_wait_s=60)
    with receiving() as receiver:
        shop, hook = await hooked(client, receiver.url, "STAND_IN", "AgentTaskStarted", "AgentTaskFinished")
        t = new_trace_id()
        await post(shop, export(chat(t, new_span_id()), tool(t, new_span_id())))
        await sweep(datetime.now(timezone.utc) + timedelta(seconds=61))
        await post(shop, export(*estimate(new_trace_id())))
        await sender.deliver_due()

    told = receiver.verified(hook["secret"])
    [stand_in] = [t for t in told if t["type"] == "STAND_IN"]
    assert (stand_in["data"]["traceId"], stand_in["data"]["spans"]) == (t.hex(), 2)
    assert stand_in["data"]["task"]["agent"] == "unknown"
    agents = {(t["type"], t["data"]["task"]["agent"]) for t in told if t["type"] != "STAND_IN"}
    assert ("AgentTaskStarted", "Estimator") in agents and ("AgentTaskFinished", "Estimator") in agents


async def test_work_erased_and_forgotten_is_told_with_the_task_as_the_erasure_left_it(client, private):
    with receiving() as receiver:
        shop, hook = await hooked(client, receiver.url, "AgentWorkErased")
        erased, forgotten = await shop.estimate(), await shop.estimate()
        privacy = shop.person("pia", "Privacy")
        await client.ok("mutation($id: ID!, $why: String!) { anonymiseAgentWork(task: $id, why: $why) }",
                        {"id": erased, "why": "Mia asked."}, privacy)
        await client.ok("mutation($id: ID!) { forgetAgentWork(task: $id) }", {"id": forgotten}, privacy)
        await sender.deliver_due()

    told = {t["data"]["task"]["id"]: t for t in receiver.verified(hook["secret"])}
    assert set(told) == {erased, forgotten} and {t["type"] for t in told.values()} == {"AgentWorkErased"}
    assert told[erased]["data"]["task"]["requester_id"] is None
