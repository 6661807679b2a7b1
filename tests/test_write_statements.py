"""What a recorded line sends: the tree locked, the agent's logging mode and the tenant's webhooks read in one
statement, then, on PostgreSQL, everything it stores in one more (the meter row with its turn, the line, the head
and its signed checkpoint). Every statement here is a round trip on every line a kit records."""

import re

from tortoise.connection import get_connection

from tests.shop import Shop
from tests.tenant_statements import caller, watched

RECORD = "mutation($input: RecordLinesInput!) { recordLines(input: $input) { lastSeq } }"
MODEL_CALL = {"model": "Everyday", "inputTokens": 120, "outputTokens": 30, "costMicros": 200}


def postgres() -> bool:
    return get_connection("default").capabilities.dialect == "postgres"


def tables(sql: str) -> set[str]:
    return set(re.findall(r'(?:FROM|JOIN|INTO|UPDATE) "(\w+)"', sql))


LOCKED = {"agent_task", "agent", "webhook"}
"""What the statement that locks the tree reads: the tree, the agent's logging, the tenant's webhooks."""


def reads(sent) -> list[set[str]]:
    """The tables each SELECT reads, in the order sent."""
    return [tables(s.sql) for s in sent if s.sql.lstrip().upper().startswith("SELECT")]


async def sent_by(shop: Shop, mutation: str, input: dict) -> list:
    with watched() as sent, caller(shop.tenant):
        await shop.write(mutation, input)
    return sent


async def test_a_model_call_reads_the_locked_tree_with_the_agents_logging_then_its_turn(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    sent = await sent_by(shop, "recordModelCall", {"task": task, **MODEL_CALL})

    if postgres():
        assert len(sent) == 2
        assert reads(sent) == [LOCKED]
        assert tables(sent[1].sql) == {"llm_call", "trace_event", "agent_task", "checkpoint"}
    else:
        assert reads(sent) == [LOCKED, {"llm_call"}]


async def test_a_tool_call_its_result_and_the_end_each_read_only_the_locked_tree(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    tool_call = await sent_by(shop, "recordToolCall", {"task": task, "tool": "PartsFor", "input": {}})
    result = await sent_by(shop, "recordToolResult", {"task": task, "tool": "PartsFor", "output": []})
    end = await sent_by(shop, "endTask", {"task": task, "status": "DONE"})

    assert reads(tool_call) == reads(result) == reads(end) == [LOCKED]
    if postgres():
        assert len(tool_call) == len(result) == 2
        assert tables(tool_call[1].sql) == tables(result[1].sql) == {"trace_event", "agent_task", "checkpoint"}


async def test_turns_counted_in_the_write_follow_one_another_and_skip_a_tools_calls(client):
    shop = Shop(client)
    await shop.setup()
    task = (await shop.start())["id"]

    for by_tool in (None, None, "PartsFor", None):
        await shop.write("recordModelCall", {"task": task, **MODEL_CALL, "byTool": by_tool})
    short = [{"modelCall": MODEL_CALL}, {"modelCall": {**MODEL_CALL, "byTool": "PartsFor"}}, {"modelCall": MODEL_CALL}]
    await shop.client.ok(RECORD, {"input": {"task": task, "lines": short}}, shop.kit)
    await shop.client.ok(RECORD, {"input": {"task": task, "lines": short * 7}}, shop.kit)
    await shop.write("recordModelCall", {"task": task, **MODEL_CALL})

    calls = (await shop.read(task, shop.mia, "calls { turn }"))["calls"]
    assert [c["turn"] for c in calls] == [1, 2, None, 3, 4, None, 5, *[t for n in range(7) for t in (
        6 + 2 * n, None, 7 + 2 * n)], 20]


async def test_a_write_to_work_asked_to_stop_learns_it_from_the_locked_root_with_no_statement_more(client):
    shop = Shop(client)
    await shop.setup()
    running, stopped = (await shop.start())["id"], (await shop.start())["id"]
    below = (await shop.write("startTask", {"agent": "Estimator", "skill": "FindParts", "parent": stopped,
                                            "actor": {"id": "estimator"}}))["id"]
    await shop.client.ok("mutation($input: StopTaskInput!) { stopTask(input: $input) { id } }",
                         {"input": {"task": stopped, "reason": "The customer collected the bike."}}, shop.noor)

    before = await sent_by(shop, "recordModelCall", {"task": running, **MODEL_CALL})
    after = await sent_by(shop, "recordModelCall", {"task": stopped, **MODEL_CALL})
    under = await sent_by(shop, "recordModelCall", {"task": below, **MODEL_CALL})

    assert len(before) == len(after) == (2 if postgres() else 4)
    assert len(under) == len(before) + 1
    assert [tables(s.sql) for s in after] == [tables(s.sql) for s in before]
