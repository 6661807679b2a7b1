"""Content that is withheld is never stored at all, and a turn says why it has none."""

from __future__ import annotations

import pytest

from models import AgentHelp, AgentTask, TraceEvent
from tests.shop import Shop
from tests.test_transcript import TURN_FIELDS

ERASE_CONTENT = "mutation($id: ID!) { eraseAgentWorkContent(task: $id, why: \"Asked to.\") }"


def fiona(shop: Shop) -> str:
    """Finance, who may read the Estimator's transcripts, and an auditor, who reads every line's content."""
    return shop.person("fiona", "Finance", "Auditor")


async def estimate_with_help(shop: Shop, **model_call: object) -> str:
    """The shop's estimate, with a question to Noor in the middle."""
    task = (await shop.start(instructionsSent="Estimate in whole hours."))["id"]
    await shop.model_call(task, **model_call)
    await shop.tool(task, "PartsFor", {"fault": "rear brake does not bite"}, ["brake pads", "cable"], "c1")
    help = (await shop.write("askForHelp", {"task": task, "question": "Rim or disc?", "askedOf": {"id": "noor"}}))["id"]
    await shop.write("sendBack", {"help": help, "answer": "Rim.", "by": {"id": "noor", "name": "Noor"}})
    await shop.model_call(task, response={"text": "done"})
    await shop.end(task, outcome="Estimated one hour.", result={"hours": 1})
    return task


async def read(shop: Shop, task: str) -> dict:
    fields = f"given result instructionsSent instructionsHash turns spentMicros record {{ kind payload contentAccess withheldReason }} " \
             f"transcript {{ {TURN_FIELDS} }}"
    return await shop.read(task, fiona(shop), fields)


async def stored_content(task: str) -> list:
    row = await AgentTask.get(id=task)
    lines = await TraceEvent.filter(task_id=task).order_by("seq").values_list("payload", flat=True)
    helps = await AgentHelp.filter(task_id=task).values_list("question", "answer")
    return [row.given, row.result, row.instructions_sent, *lines, *(text for pair in helps for text in pair)]


def assert_withheld_everywhere(receipt: dict, reason: str) -> None:
    assert receipt["given"] is None and receipt["result"] is None and receipt["instructionsSent"] is None
    assert {(line["payload"], line["contentAccess"], line["withheldReason"]) for line in receipt["record"]} == {
        (None, "WITHHELD", reason)}
    turns = receipt["transcript"]
    assert [t["turn"] for t in turns] == [1, 2] and receipt["turns"] == 2 and receipt["spentMicros"] == 400
    for turn in turns:
        assert (turn["contentWithheld"], turn["withheldReason"]) == (True, reason)
        assert turn["systemPrompt"] is None and turn["messages"] is None and turn["response"] is None
    assert [(t["name"], t["toolCallId"], t["input"], t["output"]) for t in turns[0]["tools"]] == [
        ("PartsFor", "c1", None, None)]


async def test_a_metadata_only_agent_has_its_content_withheld_and_none_of_it_is_stored(client):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Finance"], logging="METADATA_ONLY")
    task = await estimate_with_help(shop)

    receipt = await read(shop, task)

    assert_withheld_everywhere(receipt, "METADATA_ONLY")
    assert receipt["instructionsHash"] is not None
    assert set(await stored_content(task)) == {None}


async def test_with_recording_off_no_content_is_stored_and_turns_say_recording_off(client, configure):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Finance"])
    configure(record_content=False)
    task = await estimate_with_help(shop)
    outside = (await shop.write("askForHelp", {"question": "Open on Sunday?", "askedOf": {"id": "olga"}}))["id"]
    configure(record_content=True)

    receipt = await read(shop, task)

    assert_withheld_everywhere(receipt, "RECORDING_OFF")
    assert set(await stored_content(task)) == {None}
    assert (await AgentHelp.get(id=outside)).question is None


async def test_a_redacted_call_withholds_that_one_call_only(client):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Finance"])
    task = await estimate_with_help(shop, classification="REDACTED")

    receipt = await read(shop, task)
    redacted, after = receipt["transcript"]

    assert (redacted["contentWithheld"], redacted["withheldReason"], redacted["response"]) == (True, "REDACTED", None)
    assert (after["contentWithheld"], after["withheldReason"], after["response"]) == (False, None, {"text": "done"})
    assert redacted["tools"][0]["input"] == {"fault": "rear brake does not bite"}
    assert [(line["kind"], line["contentAccess"], line["withheldReason"]) for line in receipt["record"]
            if line["payload"] is None] == [("MODEL_CALL", "WITHHELD", "REDACTED")]
    assert {line["withheldReason"] for line in receipt["record"] if line["payload"] is not None} == {None}
    stored = await TraceEvent.filter(task_id=task, kind="MODEL_CALL").order_by("seq").values_list("payload", flat=True)
    assert stored[0] is None and stored[1] is not None
    assert receipt["given"] is not None and receipt["result"] == {"hours": 1}


@pytest.mark.parametrize("logging,record_content,expected", [
    ("METADATA_ONLY", False, "METADATA_ONLY"),
    ("FULL", False, "RECORDING_OFF"),
])
async def test_the_first_reason_that_applies_is_the_one_a_turn_gives(client, configure, logging, record_content,
                                                                       expected):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Finance"], logging=logging)
    configure(record_content=record_content)
    task = (await shop.start())["id"]
    await shop.model_call(task, classification="REDACTED")

    turns = (await read(shop, task))["transcript"]

    assert [t["withheldReason"] for t in turns] == [expected]


async def test_an_erased_turn_says_erased_whatever_it_was_before(client):
    shop = Shop(client)
    await shop.setup(transcript_readers=["Finance"])
    task = await estimate_with_help(shop, classification="REDACTED")

    await shop.client.ok(ERASE_CONTENT, {"id": task}, shop.person("priya", "Privacy"))
    turns = (await read(shop, task))["transcript"]

    assert [(t["contentWithheld"], t["withheldReason"], t["response"]) for t in turns] == [(True, "ERASED", None)] * 2
    assert [(x["input"], x["output"]) for x in turns[0]["tools"]] == [(None, None)]
