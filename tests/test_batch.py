"""recordLines: a kit that buffers its steps writes them in one call, and the record reads as if written one by one."""

import asyncio

from models import AgentTask, LlmCall, TraceEvent
from permissions.tokens import issue_token
from tests.shop import LINE_FIELDS, Shop

RECORD = f"""mutation($input: RecordLinesInput!) {{
  recordLines(input: $input) {{ firstSeq lastSeq lastHash task {{ id chainLength }} lines {{ {LINE_FIELDS} }} }}
}}"""


def turn(call_id: str, **model_call: object) -> list[dict]:
    """One agent turn as the kit buffered it: the model asks for a tool, the tool answers."""
    return [
        {"modelCall": {
            "model": "Everyday", "routeRule": "llm:default", "provider": "scripted", "inputTokens": 120,
            "outputTokens": 30, "costMicros": 200, "durationMs": 40, "systemPrompt": "You estimate bicycle repairs.",
            "messages": [{"role": "user", "content": "T-7"}], "response": {"toolCalls": [{"name": "PartsFor"}]},
            **model_call,
        }},
        {"toolCall": {"tool": "PartsFor", "toolCallId": call_id, "input": {"fault": "rear brake does not bite"}}},
        {"toolResult": {"tool": "PartsFor", "toolCallId": call_id, "output": ["brake pads", "cable"], "durationMs": 7}},
    ]


async def record(shop: Shop, task: str, lines: list[dict], token: str | None = None, **input: object) -> dict:
    data = await shop.client.ok(RECORD, {"input": {"task": task, "lines": lines, **input}}, token or shop.kit)
    return data["recordLines"]


async def refused(shop: Shop, task: str, lines: list[dict], token: str | None = None, **input: object) -> dict:
    return await shop.client.error(RECORD, {"input": {"task": task, "lines": lines, **input}}, token or shop.kit)


async def started(shop: Shop) -> str:
    await shop.setup()
    return (await shop.start())["id"]


async def test_the_lines_are_recorded_in_the_order_given_and_the_chain_verifies(client):
    shop = Shop(client)
    task = await started(shop)

    recorded = await record(shop, task, turn("c1") + turn("c2"))

    lines = recorded["lines"]
    assert (recorded["firstSeq"], recorded["lastSeq"], recorded["lastHash"]) == (2, 7, lines[-1]["hash"])
    assert recorded["task"] == {"id": task, "chainLength": 7}
    assert [line["seq"] for line in lines] == [2, 3, 4, 5, 6, 7]
    assert [line["kind"] for line in lines] == ["MODEL_CALL", "TOOL_CALL", "TOOL_RESULT"] * 2
    assert [line["toolCallId"] for line in lines] == [None, "c1", "c1", None, "c2", "c2"]
    assert all(line["summary"] is None and line["payload"] is None for line in lines)
    receipt = await shop.read(task, shop.mia, f"chainLength chainHead record {{ {LINE_FIELDS} }}")
    record_ = receipt["record"]
    assert [line["hash"] for line in record_[1:]] == [line["hash"] for line in lines]
    assert record_[1]["summary"] == "Everyday (chosen by llm:default) asked for a tool; it cost $0.0002."
    assert record_[2]["payload"] == '{"fault":"rear brake does not bite"}'
    assert receipt["chainLength"] == 7 and receipt["chainHead"] == lines[-1]["hash"]
    assert all(b["prevHash"] == a["hash"] for a, b in zip(record_, record_[1:]))
    assert await shop.verify(task) == {"intact": True, "lines": 7, "brokenAt": None, "problem": None, "erased": 0}


async def test_a_batch_reads_like_the_same_steps_written_one_by_one(client):
    one_by_one, batched = Shop(client), Shop(client)
    first, second = await started(one_by_one), await started(batched)
    await one_by_one.model_call(first)
    await one_by_one.tool(first, "PartsFor", {"fault": "rear brake does not bite"}, ["brake pads", "cable"], "c1")
    await one_by_one.tool(first, "NoteRepair", {"repair": "T-7"}, "Noted on T-7.", "c2", effect="CHANGE")

    await record(batched, second, turn("c1") + [
        {"toolCall": {"tool": "NoteRepair", "toolCallId": "c2", "input": {"repair": "T-7"}, "effect": "CHANGE"}},
        {"toolResult": {"tool": "NoteRepair", "toolCallId": "c2", "output": "Noted on T-7.", "durationMs": 7}},
    ])

    fields = "summary payload model routeRule costMicros tool toolCallId durationMs isError contentAccess"
    singles = (await one_by_one.read(first, one_by_one.mia, f"trace {{ {fields} }}"))["trace"]
    batch = (await batched.read(second, batched.mia, f"trace {{ {fields} }}"))["trace"]
    assert batch == singles


async def test_each_model_call_gets_its_meter_row_and_turn(client):
    shop = Shop(client)
    task = await started(shop)
    await shop.model_call(task)
    tool_made = {"modelCall": {"model": "Small", "inputTokens": 5, "outputTokens": 1, "costMicros": 3,
                               "byTool": "PartsFor"}}

    await record(shop, task, turn("c1", costMicros=250) + [tool_made] + turn("c2", costMicros=300))

    lines = await TraceEvent.filter(task_id=task, kind="MODEL_CALL").order_by("seq")
    calls = {c.id: c for c in await LlmCall.filter(task_id=task)}
    meter = [calls[line.call_id] for line in lines]
    assert [(c.turn, c.cost_micros, c.by_tool) for c in meter] == [
        (1, 200, None), (2, 250, None), (None, 3, "PartsFor"), (3, 300, None)
    ]
    assert len(calls) == 4
    assert all(c.provider == "scripted" for c in meter if c.by_tool is None)
    receipt = await shop.read(task, shop.mia)
    assert receipt["spentMicros"] == 753 and receipt["modelCalls"] == 4 and receipt["turns"] == 3
    assert receipt["toolCalls"] == 2


async def test_a_retried_batch_returns_the_first_answer_and_appends_nothing(client):
    shop = Shop(client)
    task = await started(shop)

    first = await record(shop, task, turn("c1"), idempotencyKey="flush-1")
    again = await record(shop, task, turn("c1"), idempotencyKey="flush-1")

    assert again == first
    assert (await AgentTask.get(id=task)).chain_length == 4
    assert await LlmCall.filter(task_id=task).count() == 1


async def test_concurrent_retries_of_one_batch_write_it_once(client):
    shop = Shop(client)
    task = await started(shop)

    answers = await asyncio.gather(*(record(shop, task, turn("c1"), idempotencyKey="flush-1") for _ in range(5)))

    assert all(answer == answers[0] for answer in answers)
    assert (await AgentTask.get(id=task)).chain_length == 4


async def test_the_same_key_with_other_lines_is_a_conflict(client):
    shop = Shop(client)
    task = await started(shop)
    await record(shop, task, turn("c1"), idempotencyKey="flush-1")

    error = await refused(shop, task, turn("c2"), idempotencyKey="flush-1")

    assert error["extensions"]["code"] == "CONFLICT"
    assert "idempotencyKey" in error["message"]
    assert (await AgentTask.get(id=task)).chain_length == 4


async def test_one_bad_line_refuses_the_whole_batch_and_writes_nothing(client):
    shop = Shop(client)
    task = await started(shop)
    bad = turn("c2", outputTokens=-1)

    error = await refused(shop, task, turn("c1") + bad)

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert "lines[3].modelCall.outputTokens" in error["message"]
    assert (await AgentTask.get(id=task)).chain_length == 1
    assert await TraceEvent.filter(task_id=task).count() == 1
    assert await LlmCall.filter(task_id=task).count() == 0


async def test_a_line_must_be_exactly_one_kind(client):
    shop = Shop(client)
    task = await started(shop)
    both = {"toolCall": {"tool": "PartsFor"}, "toolResult": {"tool": "PartsFor"}}

    assert (await refused(shop, task, [both]))["extensions"]["code"] == "BAD_INPUT"
    assert (await refused(shop, task, [{}]))["extensions"]["code"] == "BAD_INPUT"
    assert (await refused(shop, task, []))["extensions"]["code"] == "BAD_INPUT"
    assert (await AgentTask.get(id=task)).chain_length == 1


async def test_a_batch_too_long_is_refused(client):
    shop = Shop(client)
    task = await started(shop)
    lines = [{"toolCall": {"tool": "PartsFor"}}] * 1001

    error = await refused(shop, task, lines)

    assert error["extensions"]["code"] == "BAD_INPUT"
    assert (await AgentTask.get(id=task)).chain_length == 1


async def test_an_ended_task_takes_no_batch(client):
    shop = Shop(client)
    task = await started(shop)
    await shop.end(task)

    error = await refused(shop, task, turn("c1"))

    assert error["extensions"]["code"] == "CONFLICT"
    assert (await AgentTask.get(id=task)).chain_length == 2
    assert await LlmCall.filter(task_id=task).count() == 0


async def test_unknown_malformed_and_other_tenants_tasks(client):
    shop, other = Shop(client), Shop(client)
    theirs = await started(other)
    await shop.setup()

    assert (await refused(shop, theirs, turn("c1")))["extensions"]["code"] == "NOT_FOUND"
    assert (await refused(shop, "not-a-task", turn("c1")))["extensions"]["code"] == "BAD_INPUT"
    assert (await AgentTask.get(id=theirs)).chain_length == 1


async def test_only_a_kit_may_record_lines(client):
    shop = Shop(client)
    task = await started(shop)
    everyone = [shop.mia, shop.noor, shop.person("pat", "Privacy"), issue_token("agent-kit", "elsewhere", kit=False)]

    for token in everyone:
        assert (await refused(shop, task, turn("c1"), token))["extensions"]["code"] == "FORBIDDEN"
    anonymous = await client.error(RECORD, {"input": {"task": task, "lines": turn("c1")}})
    assert anonymous["extensions"]["code"] == "UNAUTHENTICATED"
    assert (await AgentTask.get(id=task)).chain_length == 1


async def test_content_is_withheld_per_line_as_the_single_writes_withhold_it(client):
    shop = Shop(client)
    task = await started(shop)

    await record(shop, task, turn("c1", classification="REDACTED"))

    lines = (await shop.read(task, shop.mia, "trace { contentAccess payload }"))["trace"][1:]
    assert [line["contentAccess"] for line in lines] == ["WITHHELD", "SHOWN", "SHOWN"]
    assert lines[0]["payload"] is None and lines[1]["payload"] is not None
    assert await shop.verify(task) == {"intact": True, "lines": 4, "brokenAt": None, "problem": None, "erased": 0}


async def test_a_metadata_only_agent_stores_no_content_in_a_batch(client):
    shop = Shop(client)
    await shop.setup(logging="METADATA_ONLY")
    task = (await shop.start())["id"]

    await record(shop, task, turn("c1"))

    lines = (await shop.read(task, shop.mia, "trace { contentAccess }"))["trace"][1:]
    assert [line["contentAccess"] for line in lines] == ["WITHHELD"] * 3
    assert await TraceEvent.filter(task_id=task, payload__not_isnull=True).count() == 0


async def test_a_sub_task_batch_joins_the_trees_one_chain(client):
    shop = Shop(client)
    root = await started(shop)
    child = (await shop.start(parent=root, skill="FindParts"))["id"]

    await asyncio.gather(record(shop, root, turn("r1")), record(shop, child, turn("k1")), shop.model_call(root))

    seqs = await TraceEvent.filter(root_id=root).order_by("seq").values_list("seq", flat=True)
    assert seqs == list(range(1, 10))
    assert (await shop.verify(root))["intact"]
    assert (await AgentTask.get(id=root)).chain_length == 9
