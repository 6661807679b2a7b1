"""Retention: a tenant's ended work is forgotten retainDays after its root ended, as forgetAgentWork forgets it,
and idempotency keys expire; every sweep here runs on an injected clock."""

from datetime import timedelta

from models import AgentTask, IdempotencyKey, LlmCall, db
from models.ledger import ledger_id
from resolvers.forget import retention
from resolvers.write.append import now
from tests.shop import Shop

POLICIES = "mutation($input: PoliciesInput!) { definePolicies(input: $input) { retainDays auditsAgents } }"
LOG = "{ erasures(first: 5) { kind why rootId lines by { id name } } }"


async def keeping(client, days: int) -> Shop:
    shop = Shop(client)
    await shop.setup()
    basis = "The shop keeps repair records 30 days; its customers agreed to it."
    data = await client.ok(POLICIES, {"input": {"retainDays": days, "retentionBasis": basis}}, shop.kit)
    assert data["definePolicies"] == {"retainDays": days, "auditsAgents": ["Auditor"]}
    return shop


async def test_retain_days_is_set_kept_and_turned_off(client):
    shop = await keeping(client, 30)

    kept = await client.ok(POLICIES, {"input": {"auditsAgents": ["Auditor"]}}, shop.kit)
    off = await client.ok(POLICIES, {"input": {"retainDays": 0}}, shop.kit)

    assert kept["definePolicies"]["retainDays"] == 30
    assert off["definePolicies"]["retainDays"] is None


async def test_a_retain_days_out_of_range_is_refused_and_writes_nothing(client):
    shop = await keeping(client, 30)

    for days in (-1, 36501):
        error = await client.error(POLICIES, {"input": {"retainDays": days}}, shop.kit)
        assert error["extensions"]["code"] == "BAD_INPUT" and "retainDays" in error["message"]
    assert (await client.ok(POLICIES, {"input": {}}, shop.kit))["definePolicies"]["retainDays"] == 30


async def test_work_is_forgotten_once_its_root_ended_retain_days_ago(client):
    shop = await keeping(client, 30)
    task = await shop.estimate()
    running = (await shop.start())["id"]
    ended = (await AgentTask.get(id=task)).ended_at

    assert (await retention.sweep(ended + timedelta(days=29), wait=True)).trees == 0
    assert await shop.read(task, shop.noor, "id") is not None

    swept = await retention.sweep(ended + timedelta(days=30, seconds=1), wait=True)

    assert swept.trees >= 1
    assert await shop.read(task, shop.noor, "id") is None
    assert await shop.read(running, shop.noor, "id") is not None
    meter = await LlmCall.filter(tenant=shop.tenant).values_list("task_id", "cost_micros")
    assert meter == [(None, 200)] * 3
    [entry] = (await client.ok(LOG, token=shop.noor))["erasures"]
    assert entry == {
        "kind": "FORGET_AGENT_WORK", "why": "The tenant keeps work 30 days after it ends.", "rootId": task,
        "lines": 9, "by": {"id": "retention", "name": "retention"},
    }


async def test_a_tenant_without_retain_days_keeps_its_work(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    await retention.sweep(now() + timedelta(days=3650), wait=True)

    assert await shop.read(task, shop.noor, "id") is not None


async def test_idempotency_keys_expire_after_the_set_days(client, configure):
    shop = Shop(client)
    await shop.setup()
    await shop.write("startTask", {"agent": "Estimator", "skill": "EstimateRepair", "actor": {"id": "e"},
                                   "idempotencyKey": "start-1"})
    made = (await IdempotencyKey.get(tenant=shop.tenant, key="start-1")).created_at

    await retention.sweep(made + timedelta(days=6, hours=23), wait=True)
    assert await IdempotencyKey.filter(tenant=shop.tenant).count() == 1

    configure(idempotency_days=2)
    await retention.sweep(made + timedelta(days=2, seconds=1), wait=True)
    assert await IdempotencyKey.filter(tenant=shop.tenant).count() == 0


async def test_one_process_sweeps_at_a_time(client):
    shop = await keeping(client, 1)
    task = await shop.estimate()
    later = now() + timedelta(days=2)

    async with db.one_at_a_time(wait=True) as mine:
        assert mine
        assert await retention.sweep(later) is None
        assert await shop.read(task, shop.noor, "id") is not None
    assert (await retention.sweep(later)).trees >= 1


async def test_many_trees_are_swept_page_by_page(client, monkeypatch):
    monkeypatch.setattr(retention, "PAGE", 2)
    shop = await keeping(client, 1)
    for _ in range(5):
        await shop.end((await shop.start())["id"])

    await retention.sweep(now() + timedelta(days=2), wait=True)

    assert await AgentTask.filter(tenant=shop.tenant).values_list("id", flat=True) == [ledger_id(shop.tenant)]
    assert len((await client.ok(LOG, token=shop.noor))["erasures"]) == 5
