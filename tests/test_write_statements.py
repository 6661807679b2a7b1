"""What a recorded line reads before it writes: the tree locked and the agent's logging mode read in one statement,
then, for a model call, its turn on the meter. Every read here is a round trip on every line a kit records."""

import re

from tests.shop import Shop
from tests.tenant_statements import caller, watched


def reads(sent) -> list[set[str]]:
    """The tables each SELECT reads, in the order sent."""
    return [set(re.findall(r'(?:FROM|JOIN) "(\w+)"', s.sql)) for s in sent if s.sql.lstrip().upper().startswith("SELECT")]


async def read_before_writing(shop: Shop, mutation: str, input: dict) -> list[set[str]]:
    with watched() as sent, caller(shop.tenant):
        await shop.write(mutation, input)
    return reads(sent)


async def test_a_model_call_reads_the_locked_tree_with_the_agents_logging_then_its_turn(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    model_call = await read_before_writing(shop, "recordModelCall", {
        "task": task, "model": "Everyday", "inputTokens": 120, "outputTokens": 30, "costMicros": 200,
    })

    assert model_call == [{"agent_task", "agent"}, {"llm_call"}]


async def test_a_tool_call_its_result_and_the_end_each_read_only_the_locked_tree(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    tool_call = await read_before_writing(shop, "recordToolCall", {"task": task, "tool": "PartsFor", "input": {}})
    result = await read_before_writing(shop, "recordToolResult", {"task": task, "tool": "PartsFor", "output": []})
    end = await read_before_writing(shop, "endTask", {"task": task, "status": "DONE"})

    assert tool_call == result == end == [{"agent_task", "agent"}]

