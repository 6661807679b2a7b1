"""Verifying a tree while eight writers append to it: never a false alarm, and a real change is still found."""

import asyncio

from models import TraceEvent
from tests.shop import Shop

WRITERS = 8
CHECKS = 50
PAUSE = 0.1


async def a_tree(shop: Shop) -> list[str]:
    """A root and seven sub-tasks, all running: eight tasks of one chain to append to."""
    await shop.setup()
    root = (await shop.start())["id"]
    return [root, *[(await shop.start(parent=root, skill="FindParts"))["id"] for _ in range(WRITERS - 1)]]


async def checks_while_appending(shop: Shop, tasks: list[str], during=None) -> list[tuple[int, dict]]:
    """CHECKS verifications of the tree while one writer per task appends tool calls; each with the head
    length read just before it."""
    stop = asyncio.Event()

    async def writer(task: str) -> int:
        n = 0
        while not stop.is_set():
            await shop.write("recordToolCall", {"task": task, "tool": "PartsFor", "input": {"n": n}})
            n += 1
            await asyncio.sleep(PAUSE)
        return n

    running = [asyncio.create_task(writer(task)) for task in tasks]
    found = []
    try:
        for n in range(CHECKS):
            if during is not None and n == CHECKS // 2:
                await during()
            head = (await shop.read(tasks[0], shop.noor, "chainLength"))["chainLength"]
            found.append((head, await shop.verify(tasks[0])))
    finally:
        stop.set()
        written = await asyncio.gather(*running)
    assert all(written), "every writer appended while the tree was verified"
    return found


async def test_every_check_during_appends_is_intact_and_covers_the_head_read_before_it(client):
    shop = Shop(client)
    tasks = await a_tree(shop)

    found = await checks_while_appending(shop, tasks)

    assert [check for _, check in found if not check["intact"]] == []
    assert all(check["lines"] >= head for head, check in found)
    assert len({check["lines"] for _, check in found}) > 1, "the chain grew between checks"


async def test_a_sentence_changed_while_writers_append_is_found_at_its_line(client):
    shop = Shop(client)
    tasks = await a_tree(shop)
    root_line = TraceEvent.filter(task_id=tasks[0], seq=1)

    async def tamper() -> None:
        await root_line.update(summary="Nobody started this.")

    found = await checks_while_appending(shop, tasks, during=tamper)

    before, after = found[: CHECKS // 2], found[CHECKS // 2:]
    assert all(check["intact"] for _, check in before)
    assert all((check["intact"], check["brokenAt"]) == (False, 1) for _, check in after)
