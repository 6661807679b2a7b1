"""Many writers at once on one tree: one chain, never forked, no seq repeated or skipped."""

import asyncio

from models import AgentTask, LlmCall, TraceEvent
from tests.shop import Shop

WRITERS = 50


async def test_fifty_concurrent_appenders_leave_one_intact_chain(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    async def write(i: int) -> dict:
        return await shop.write("recordToolCall", {"task": task, "tool": "PartsFor", "input": {"writer": i}})

    lines = await asyncio.gather(*(write(i) for i in range(WRITERS)))

    assert sorted(line["seq"] for line in lines) == list(range(2, WRITERS + 2))
    root = await AgentTask.get(id=task)
    assert root.chain_length == WRITERS + 1
    seqs = await TraceEvent.filter(root_id=root.id).order_by("seq").values_list("seq", flat=True)
    assert seqs == list(range(1, WRITERS + 2))
    assert await shop.verify(task) == {"intact": True, "lines": WRITERS + 1, "brokenAt": None, "problem": None, "erased": 0}


async def test_concurrent_sub_tasks_get_distinct_sequences_and_one_chain(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]

    children = await asyncio.gather(*(shop.start(parent=root, skill=f"Part{i}") for i in range(20)))

    assert sorted(child["sequence"] for child in children) == list(range(1, 21))
    assert {child["depth"] for child in children} == {1}
    assert all(child["path"] == f"{root}/{child['id']}" for child in children)
    check = await shop.verify(root)
    assert check["intact"] and check["lines"] == 21


async def test_concurrent_model_calls_number_their_turns_without_gap_or_repeat(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]
    call = {"model": "Everyday", "inputTokens": 120, "outputTokens": 30, "costMicros": 200}
    batch = "mutation($input: RecordLinesInput!) { recordLines(input: $input) { lastSeq } }"

    async def write(i: int) -> None:
        if i % 10 == 9:
            lines = [{"modelCall": call}, {"modelCall": {**call, "byTool": "PartsFor"}}] * (3 if i % 20 == 9 else 12)
            await shop.client.ok(batch, {"input": {"task": task, "lines": lines}}, shop.kit)
        else:
            await shop.write("recordModelCall", {"task": task, **call})

    await asyncio.gather(*(write(i) for i in range(WRITERS)))

    turns = await LlmCall.filter(task_id=task).exclude(turn=None).order_by("at").values_list("turn", flat=True)
    assert sorted(turns) == list(range(1, 45 + 3 * 3 + 2 * 12 + 1))
    assert (await shop.verify(task))["intact"]
