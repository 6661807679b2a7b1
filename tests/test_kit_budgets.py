"""The kit against a running `agentlog serve`: Mia's estimate may spend $0.0005; the Estimator's write that takes
it past that raises `BudgetExceeded` (its task ends FAILED), or, for a kit made with `on_budget="warn"`, warns and
the work goes on."""

from __future__ import annotations

import warnings

import httpx
import pytest

from agentlog_kit import AsyncKit, BudgetExceeded, BudgetWarning, Kit
from permissions.tokens import issue_token
from tests.kit_reads import LiveShop

MIA = {"id": "mia", "name": "Mia"}
READ = "query($id: ID!) { task(id: $id) { status outcome spentMicros record { kind } } }"


def read(shop: LiveShop, task: str) -> dict:
    token = issue_token("noor", shop.tenant, roles=["Manager"], name="Noor")
    body = httpx.post(shop.url + "/graphql", json={"query": READ, "variables": {"id": task}},
                      headers={"Authorization": f"Bearer {token}"}, timeout=30).json()
    assert not body.get("errors"), body
    return body["data"]["task"]


@pytest.fixture
def shop(servers) -> LiveShop:
    shop = LiveShop(servers[0])
    with Kit(shop.url, shop.kit) as kit:
        kit.register_agent("Estimator", purpose="Estimates bicycle repairs.")
        kit.define_policies(supervises_agents=["Manager"])
    return shop


def test_the_write_over_budget_raises_and_the_task_ends_failed(shop):
    calls = 0
    with Kit(shop.url, shop.kit, batch_lines=1) as kit:
        with pytest.raises(BudgetExceeded) as raised:
            with kit.task("Estimator", "EstimateRepair", requester=MIA, limit_micros=500) as t:
                for _ in range(5):
                    t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=300)
                    calls += 1

    assert calls == 1
    assert (raised.value.task, raised.value.limit_micros, raised.value.spent_micros) == (t.id, 500, 600)
    task = read(shop, t.id)
    assert (task["status"], task["spentMicros"]) == ("FAILED", 600)
    assert task["outcome"] == f"task {t.id} has spent 600 micros of its limit of 500."


def test_a_kit_made_to_warn_warns_and_the_work_goes_on(shop):
    with Kit(shop.url, shop.kit, batch_lines=1, on_budget="warn") as kit:
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            with kit.task("Estimator", "EstimateRepair", requester=MIA, limit_micros=500) as t:
                for _ in range(3):
                    t.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=300)

    assert [w.category for w in heard] == [BudgetWarning, BudgetWarning]
    assert read(shop, t.id)["status"] == "DONE" and read(shop, t.id)["spentMicros"] == 900


def test_a_kit_takes_only_raise_or_warn():
    with pytest.raises(ValueError):
        AsyncKit("http://127.0.0.1:9", "token", on_budget="ignore")


async def test_the_async_kit_raises_it_from_a_sub_tasks_write_over_its_parents_budget(shop):
    async with AsyncKit(shop.url, shop.kit) as kit:
        with pytest.raises(BudgetExceeded) as raised:
            async with kit.task("Estimator", "EstimateRepair", requester=MIA, limit_micros=500) as t:
                async with t.sub_task("Estimator", "FindParts") as below:
                    await below.model_call("Everyday", input_tokens=120, output_tokens=30, cost_micros=600)

    assert raised.value.task == t.id
    assert read(shop, below.id)["status"] == "FAILED" and read(shop, t.id)["status"] == "FAILED"
