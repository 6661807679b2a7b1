"""Many writers at once on one tree: one chain, never forked, no seq repeated or skipped."""

import asyncio

from models import AgentTask, TraceEvent
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
