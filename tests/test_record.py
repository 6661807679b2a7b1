"""End to end: Mia asks, the Estimator works, the receipt and the record say what happened."""

from tests.shop import LINE_FIELDS, Shop

ESTIMATE_KINDS = ["STARTED", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT", "MODEL_CALL", "TOOL_CALL", "TOOL_RESULT",
              "MODEL_CALL", "ENDED"]


async def test_the_receipt_says_who_asked_as_whom_it_ran_and_what_it_cost(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    receipt = await shop.read(task, shop.mia)

    assert receipt["agent"] == "Estimator"
    assert receipt["skill"] == "EstimateRepair"
    assert receipt["status"] == "DONE"
    assert receipt["requester"] == {"id": "mia", "name": "Mia"}
    assert receipt["actor"] == {"id": "estimator", "name": "Estimator"}
    assert receipt["spentMicros"] == 600
    assert receipt["limitMicros"] == 50000
    assert receipt["modelCalls"] == 3
    assert receipt["toolCalls"] == 2
    assert receipt["turns"] == 3
    assert receipt["inputTokens"] == 360 and receipt["outputTokens"] == 90
    assert receipt["result"] == {"hours": 1, "summary": "New pads and a cable.", "needsParts": True}


async def test_the_record_says_every_step_in_order_and_verifies(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    data = await shop.read(task, shop.mia, f"chainLength chainHead record {{ {LINE_FIELDS} }}")
    lines = data["record"]

    assert [line["kind"] for line in lines] == ESTIMATE_KINDS
    assert [line["seq"] for line in lines] == list(range(1, 10))
    assert data["chainLength"] == 9 and data["chainHead"] == lines[-1]["hash"]
    assert lines[0]["prevHash"] == "0" * 64
    assert all(b["prevHash"] == a["hash"] for a, b in zip(lines, lines[1:]))
    said = [line["summary"] for line in lines]
    assert "Everyday (chosen by llm:default) asked for a tool; it cost $0.0002." in said
    assert ("It asked for NoteRepair (changes data); it is one of this work's tools, so it runs as the agent, "
            "for whoever asked.") in said
    assert lines[2]["payload"] == '{"fault":"rear brake does not bite"}'
    assert lines[-1]["payload"] == '{"hours":1,"summary":"New pads and a cable.","needsParts":true}'
    assert await shop.verify(task) == {"intact": True, "lines": 9, "brokenAt": None, "problem": None, "erased": 0}


async def test_a_field_that_does_not_apply_to_a_line_is_null(client):
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()

    lines = (await shop.read(task, shop.mia, f"trace {{ {LINE_FIELDS} }}"))["trace"]

    started, model_call, tool_call = lines[0], lines[1], lines[2]
    for field in ("model", "routeRule", "attempts", "costMicros", "tool", "isError", "inputTokens", "durationMs"):
        assert started[field] is None, field
    assert model_call["costMicros"] == 200 and model_call["attempts"] == 1 and model_call["tool"] is None
    assert tool_call["tool"] == "PartsFor" and tool_call["costMicros"] is None and tool_call["isError"] is None
