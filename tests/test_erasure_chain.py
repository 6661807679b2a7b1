"""After erasure the chain still checks, a change made afterwards is still found at its line, and no salt is
left to confirm a guess of what was erased."""

from __future__ import annotations

import hashlib

from models import AgentHelp, AgentTask, IdempotencyKey, TraceEvent
from models.record.chain import commit
from tests.shop import LINE_FIELDS, Shop
from tests.test_erasure import erase

FAULT = '{"fault":"rear brake does not bite"}'


async def erased_job(shop: Shop, mutation: str) -> str:
    await shop.setup()
    root = await shop.estimate()
    await erase(shop, mutation, root)
    return root


async def tamper(root: str, seq: int, **fields) -> None:
    line = TraceEvent.filter(root_id=root, seq=seq)
    assert await line.count() == 1
    await line.update(**fields)


async def test_a_sentence_written_into_an_erased_line_is_found(client):
    shop = Shop(client)
    root = await erased_job(shop, "anonymiseAgentWork")

    await tamper(root, 4, summary="PartsFor was never asked for.")

    assert await shop.check(root) == {
        "intact": False, "lines": 10, "brokenAt": 4, "erased": 9, "reason": "ERASED_HAS_WORDS",
        "problem": "Line 4 was erased, and something was written in its place.",
    }


async def test_a_salt_written_back_into_an_erased_line_is_found(client):
    shop = Shop(client)
    root = await erased_job(shop, "anonymiseAgentWork")

    await tamper(root, 5, summary_salt="00" * 16)

    check = await shop.check(root)
    assert check["brokenAt"] == 5 and check["problem"] == "Line 5 was erased, and something was written in its place."


async def test_content_left_in_a_line_marked_content_erased_is_found(client):
    shop = Shop(client)
    root = await erased_job(shop, "eraseAgentWorkContent")

    await tamper(root, 3, payload=FAULT)

    assert await shop.check(root) == {
        "intact": False, "lines": 10, "brokenAt": 3, "erased": 9, "reason": "ERASED_HAS_WORDS",
        "problem": "Line 3's content is marked erased, but content is still there.",
    }


async def test_a_line_marked_erased_with_no_erasure_recorded_after_it_is_found(client):
    shop = Shop(client)
    await shop.setup()
    root = await shop.estimate()
    at = (await TraceEvent.get(root_id=root, seq=4)).at

    await tamper(root, 4, summary="Erased.", summary_salt=None, erased_at=at)

    assert await shop.check(root) == {
        "intact": False, "lines": 9, "brokenAt": 4, "erased": 1, "reason": "ERASURE_UNRECEIPTED",
        "problem": "Line 4 is marked erased, but no erasure was recorded after it.",
    }


async def test_an_erasure_line_quietly_erased_itself_is_found(client):
    shop = Shop(client)
    root = await erased_job(shop, "eraseAgentWorkContent")
    at = (await TraceEvent.get(root_id=root, seq=10)).at

    await tamper(root, 10, summary="Erased.", summary_salt=None, erased_at=at)

    check = await shop.check(root)
    assert check["brokenAt"] == 10
    assert check["problem"] == "Line 10 is marked erased, but no erasure was recorded after it."


async def test_a_changed_cost_or_tool_on_an_erased_line_is_found(client):
    for field, seq, value in (("cost_micros", 2, 1), ("tool", 3, "SetPrice"), ("input_tokens", 5, 1)):
        shop = Shop(client)
        root = await erased_job(shop, "anonymiseAgentWork")

        await tamper(root, seq, **{field: value})

        check = await shop.check(root)
        assert check["brokenAt"] == seq and check["problem"] == f"Line {seq} was changed after it was written.", field


async def test_a_real_sentence_reading_erased_is_an_ordinary_sentence(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start())["id"]
    await shop.write("recordToolCall", {"task": root, "tool": "NoteRepair", "input": {}, "summary": "Erased."})
    await shop.end(root)
    assert await shop.check(root) == {"intact": True, "lines": 3, "brokenAt": None, "reason": None, "problem": None, "erased": 0}

    await erase(shop, "eraseAgentWorkContent", root)

    line = (await shop.read(root, shop.noor, f"record {{ {LINE_FIELDS} }}"))["record"][1]
    assert line["summary"] == "Erased." and line["erasedAt"] is None and line["summarySalt"] is not None
    assert await shop.check(root) == {"intact": True, "lines": 4, "brokenAt": None, "reason": None, "problem": None, "erased": 3}
    await tamper(root, 2, summary="Erased!")
    assert (await shop.check(root))["brokenAt"] == 2


async def salts_left(tenant: str) -> set[str]:
    rows = await TraceEvent.filter(tenant=tenant).values_list("summary_salt", "payload_salt")
    return {salt for pair in rows for salt in pair if salt}


async def test_an_erased_text_cannot_be_confirmed_by_hashing_a_guess(client):
    shop = Shop(client)
    await shop.setup()
    root = await shop.estimate()
    line = (await shop.read(root, shop.noor, f"record {{ {LINE_FIELDS} }}"))["record"][2]
    assert commit(line["payloadSalt"], FAULT) == line["payloadHash"], "while the text lives, its hash checks"
    assert commit(line["summarySalt"], line["summary"]) == line["summaryHash"]
    sentence = line["summary"]

    await erase(shop, "eraseAgentWorkContent", root)

    after = (await shop.read(root, shop.noor, f"record {{ {LINE_FIELDS} }}"))["record"][2]
    assert after["payloadSalt"] is None and after["payloadHash"] == line["payloadHash"]
    salts = await salts_left(shop.tenant)
    assert all(commit(salt, FAULT) != line["payloadHash"] for salt in salts)
    assert hashlib.sha256(FAULT.encode()).hexdigest() != line["payloadHash"]
    assert commit(after["summarySalt"], sentence) == after["summaryHash"], "the sentence and its salt stay"

    await erase(shop, "anonymiseAgentWork", root)

    salts = await salts_left(shop.tenant)
    assert all(commit(salt, sentence) != line["summaryHash"] for salt in salts)
    assert not await TraceEvent.filter(root_id=root, seq__lte=10, summary_salt__isnull=False).exists()


async def tree_text(root: str) -> str:
    """Everything the tree's rows hold, as one text to search."""
    rows = [row for model in (AgentTask, TraceEvent, AgentHelp) for row in await model.filter(root_id=root).values()]
    return "\n".join(str(row) for row in rows)


async def test_no_erased_word_and_no_fingerprint_of_the_kits_inputs_is_left_in_the_tree(client):
    shop = Shop(client)
    await shop.setup()
    root = (await shop.start(idempotencyKey="start-t7"))["id"]
    parts = {"task": root, "tool": "PartsFor", "input": {"fault": "rear brake"}, "idempotencyKey": "parts-t7"}
    await shop.write("recordToolCall", parts)
    help = (await shop.write("askForHelp", {
        "task": root, "question": "Is it a rim brake?", "askedOf": {"id": "mia", "name": "Mia"},
        "idempotencyKey": "ask-t7",
    }))["id"]
    await shop.write("sendBack", {"help": help, "answer": "Yes.", "by": {"id": "mia"}, "idempotencyKey": "answer-t7"})
    await shop.end(root, outcome="Estimated one hour for T-7.", result={"hours": 1}, idempotencyKey="end-t7")
    await shop.start(about="Ticket T-9", idempotencyKey="start-t9")
    assert "rear brake" in await tree_text(root)
    assert await IdempotencyKey.filter(tenant=shop.tenant).count() == 6

    await erase(shop, "anonymiseAgentWork", root)

    text = await tree_text(root)
    for word in ("T-7", "rear brake", "rim brake", "Mia", "mia", "Estimated", "Yes."):
        assert word not in text, word
    assert "PartsFor" in text and "EstimateRepair" in text
    assert await IdempotencyKey.filter(tenant=shop.tenant).values_list("key", flat=True) == ["start-t9"]
    retried = await client.error(
        "mutation($input: ToolCallInput!) { recordToolCall(input: $input) { seq } }", {"input": parts}, shop.kit
    )
    assert retried["extensions"]["code"] == "CONFLICT"
    assert (await shop.check(root))["lines"] == 6
