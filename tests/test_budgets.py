"""Budgets that bite: Mia's estimate may spend $0.001; the write that takes its all-in spend past that is recorded
and answers `overBudget`, and the first writes past 80% and past 100% are each told once."""

import asyncio

import pytest

from resolvers.events.notices import add_publisher, remove_publisher
from tests.shop import Shop
from tests.tenant_statements import caller, watched

MODEL_CALL = "mutation($input: ModelCallInput!) { recordModelCall(input: $input) { seq costMicros } }"
LINES = "mutation($input: RecordLinesInput!) { recordLines(input: $input) { lastSeq } }"


def call(task: str, cost: int | None = 300, **more) -> dict:
    return {"task": task, "model": "Everyday", "inputTokens": 120, "outputTokens": 30, "costMicros": cost, **more}


async def spend(shop: Shop, task: str, cost: int | None = 300, **more) -> dict:
    answer = await shop.client.post(MODEL_CALL, {"input": call(task, cost, **more)}, shop.kit)
    assert not answer.get("errors"), answer
    return (answer.get("extensions") or {}).get("overBudget")


@pytest.fixture
def told():
    heard = []

    async def listen(event, row, share=None):
        if event == "AgentTaskBudgetCrossed":
            heard.append((str(row.id), share))

    add_publisher(listen)
    yield heard
    remove_publisher(listen)


async def test_the_write_past_the_limit_answers_over_budget_and_each_mark_is_told_once(client, told):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start(limitMicros=1000))["id"]

    answers = [await spend(shop, task) for _ in range(5)]

    assert answers == [None, None, None, {"task": task, "limitMicros": 1000, "spentMicros": 1200},
                       {"task": task, "limitMicros": 1000, "spentMicros": 1500}]
    assert told == [(task, 80), (task, 100)]
    assert (await shop.read(task, shop.noor, "spentMicros modelCalls")) == {"spentMicros": 1500, "modelCalls": 5}


async def test_spend_below_counts_all_in_for_every_budget_above_it(client, told):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(limitMicros=2000))["id"]
    middle = (await shop.start(parent=root, skill="FindParts", limitMicros=500))["id"]
    below = (await shop.start(parent=middle, skill="CheckStock", limitMicros=None))["id"]
    await spend(shop, root, 1000)

    over_middle = await spend(shop, below, 600)
    over_root = await spend(shop, below, 500)

    assert over_middle == {"task": middle, "limitMicros": 500, "spentMicros": 600}
    assert over_root == {"task": middle, "limitMicros": 500, "spentMicros": 1100}
    assert told == [(middle, 80), (middle, 100), (root, 80), (root, 100)]


async def test_work_without_a_limit_and_writes_without_cost_answer_nothing(client, told):
    shop = Shop(client)
    await shop.setup()
    free = (await shop.start(limitMicros=None))["id"]
    capped = (await shop.start(limitMicros=100))["id"]

    assert await spend(shop, free, 10**9) is None
    assert await spend(shop, capped, 0) is None
    tool = await shop.client.post(
        "mutation($input: ToolCallInput!) { recordToolCall(input: $input) { seq } }",
        {"input": {"task": capped, "tool": "PartsFor"}}, shop.kit)
    assert "overBudget" not in (tool.get("extensions") or {})
    assert told == []


async def test_a_batch_that_passes_both_marks_tells_both(client, told):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start(limitMicros=1000))["id"]
    lines = [{"modelCall": {k: v for k, v in call(task, 400).items() if k != "task"}} for _ in range(3)]

    answer = await shop.client.post(LINES, {"input": {"task": task, "lines": lines}}, shop.kit)

    assert answer["extensions"]["overBudget"] == {"task": task, "limitMicros": 1000, "spentMicros": 1200}
    assert told == [(task, 80), (task, 100)]


async def test_calls_priced_by_the_server_count_the_same(client, told):
    shop = Shop(client)
    await shop.setup()
    await shop.client.ok(
        "mutation($input: ModelPriceInput!) { setModelPrice(input: $input) { model } }",
        {"input": {"model": "Everyday", "inputMicrosPerMillion": 5_000_000, "outputMicrosPerMillion": 0}}, shop.kit)
    task = (await shop.start(limitMicros=1000))["id"]

    answers = [await spend(shop, task, None) for _ in range(2)]

    assert answers == [None, {"task": task, "limitMicros": 1000, "spentMicros": 1200}]
    assert told == [(task, 80), (task, 100)]


async def test_eight_writers_at_once_tell_each_mark_once(client, told):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(limitMicros=10_000))["id"]
    workers = [(await shop.start(parent=root, skill=f"Part{n}", limitMicros=None))["id"] for n in range(8)]

    async def work(task: str) -> list:
        return [await spend(shop, task, 250) for _ in range(8)]

    answered = [a for answers in await asyncio.gather(*(work(t) for t in workers)) for a in answers]

    assert sorted(told) == [(root, 80), (root, 100)]
    over = sorted(a["spentMicros"] for a in answered if a)
    assert over == list(range(10_250, 16_001, 250))
    assert (await shop.read(root, shop.noor, "cost { allInMicros }"))["cost"]["allInMicros"] == 16_000


async def sent_by(shop: Shop, task: str) -> int:
    with watched() as sent, caller(shop.tenant):
        await spend(shop, task)
    return len(sent)


async def test_a_budget_costs_a_write_no_statement_more(client):
    shop = Shop(client)
    await shop.setup()
    free = (await shop.start(limitMicros=None))["id"]
    capped = (await shop.start(limitMicros=10_000))["id"]
    free_below = (await shop.start(parent=free, skill="FindParts", limitMicros=None))["id"]
    capped_below = (await shop.start(parent=capped, skill="FindParts", limitMicros=10_000))["id"]

    counts = [await sent_by(shop, task) for task in (free, capped, free_below, capped_below)]

    assert counts[0] == counts[1] and counts[2] == counts[3] == counts[0] + 1
