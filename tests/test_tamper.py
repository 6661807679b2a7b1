"""A record changed behind the server's back is found, at the line it was changed, with the same reason by
`verifyTrace` and by the offline check of the tree's export."""

import uuid
from datetime import datetime, timezone

from tortoise.transactions import in_transaction

from models import AgentTask, TraceEvent
from models.record.chain import seal
from models.record.export_check import check_export
from resolvers.read.export import export_all
from resolvers.write.append import step_of
from tests.shop import Shop


async def recorded(client) -> tuple[Shop, str, str]:
    shop = Shop(client)
    await shop.setup()
    task = await shop.estimate()
    root = (await AgentTask.get(id=task)).root_id
    return shop, task, root


async def offline(task: str) -> tuple:
    """The export's verdict, as (first bad line, reason)."""
    export = await export_all(uuid.UUID(task))
    chunks = [chunk async for chunk in export.lines()]
    verdict = check_export(b"".join(chunks).splitlines())
    return verdict.seq, verdict.reason


async def found(shop: Shop, task: str) -> dict:
    """verifyTrace's answer, after checking the offline verifier finds the same fault at the same line."""
    check = await shop.check(task)
    assert (check["brokenAt"], check["reason"]) == await offline(task)
    return check


async def test_an_untouched_record_is_intact_online_and_offline(client):
    shop, task, _ = await recorded(client)

    check = await found(shop, task)

    assert (check["intact"], check["reason"]) == (True, None)


async def test_a_sentence_rewritten_at_line_4_is_found_at_line_4(client):
    shop, task, root = await recorded(client)
    await TraceEvent.filter(root_id=root, seq=4).update(summary="PartsFor was never asked for.")

    check = await found(shop, task)

    assert (check["intact"], check["brokenAt"], check["reason"]) == (False, 4, "SUMMARY_HASH")
    assert "sentence" in check["problem"]


async def test_a_changed_cost_is_found(client):
    shop, task, root = await recorded(client)
    await TraceEvent.filter(root_id=root, seq=5).update(cost_micros=1)

    assert ((check := await found(shop, task))["brokenAt"], check["reason"]) == (5, "LINE_HASH")


async def test_a_changed_payload_is_found(client):
    shop, task, root = await recorded(client)
    await TraceEvent.filter(root_id=root, seq=3).update(payload='{"fault":"nothing"}')

    check = await found(shop, task)

    assert (check["brokenAt"], check["reason"]) == (3, "PAYLOAD_HASH") and "content" in check["problem"]


async def test_a_removed_last_line_is_found_as_missing(client):
    shop, task, root = await recorded(client)
    await TraceEvent.filter(root_id=root, seq=9).delete()

    check = await found(shop, task)

    assert (check["intact"], check["brokenAt"], check["lines"], check["reason"]) == (False, 9, 8, "TRUNCATED")


async def slip_in(root, reseal: bool) -> None:
    async with in_transaction():
        for seq in range(9, 4, -1):
            await TraceEvent.filter(root_id=root, seq=seq).update(seq=seq + 1)
        template = await TraceEvent.get(root_id=root, seq=4)
        forged = step_of(template).line
        forged.seq, forged.summary = 5, "It asked for SetPrice (changes data)."
        if reseal:
            seal(forged, template.hash)
        else:
            forged.summary_salt, forged.payload_salt = template.summary_salt, template.payload_salt
            forged.summary_hash, forged.payload_hash = template.summary_hash, template.payload_hash
            forged.prev_hash, forged.hash = template.prev_hash, template.hash
        await TraceEvent.create(
            tenant=template.tenant, root_id=root, task_id=template.task_id, seq=5, kind=forged.kind, at=forged.at,
            summary=forged.summary, payload=forged.payload, summary_salt=forged.summary_salt,
            payload_salt=forged.payload_salt, summary_hash=forged.summary_hash, payload_hash=forged.payload_hash,
            prev_hash=forged.prev_hash, hash=forged.hash, tool=forged.tool, tool_call_id=forged.tool_call_id,
            is_error=forged.is_error, duration_ms=forged.duration_ms,
        )


async def test_a_line_slipped_in_is_found_at_its_place(client):
    shop, task, root = await recorded(client)
    await slip_in(root, reseal=False)

    check = await found(shop, task)

    assert (check["intact"], check["lines"], check["brokenAt"], check["reason"]) == (False, 10, 5, "SUMMARY_HASH")


async def test_a_line_slipped_in_with_fresh_hashes_breaks_the_line_after_it(client):
    shop, task, root = await recorded(client)
    await slip_in(root, reseal=True)

    check = await found(shop, task)

    assert (check["intact"], check["brokenAt"], check["reason"]) == (False, 6, "LINK")


async def test_two_swapped_lines_are_found_at_the_first(client):
    shop, task, root = await recorded(client)
    async with in_transaction():
        await TraceEvent.filter(root_id=root, seq=4).update(seq=-4)
        await TraceEvent.filter(root_id=root, seq=5).update(seq=4)
        await TraceEvent.filter(root_id=root, seq=-4).update(seq=5)

    assert ((check := await found(shop, task))["brokenAt"], check["reason"]) == (4, "LINK")


async def test_a_head_moved_back_is_found(client):
    shop, task, root = await recorded(client)
    await AgentTask.filter(id=root).update(chain_length=8)

    check = await found(shop, task)

    assert (check["intact"], check["brokenAt"], check["reason"]) == (False, 9, "HEAD_MISMATCH")


async def test_words_written_into_an_erased_line(client):
    shop, task, root = await recorded(client)
    await TraceEvent.filter(root_id=root, seq=4).update(erased_at=datetime.now(timezone.utc), summary="It asked.")

    check = await found(shop, task)

    assert (check["brokenAt"], check["reason"]) == (4, "ERASED_HAS_WORDS")


async def test_a_line_marked_erased_with_no_erasure_after_it(client):
    shop, task, root = await recorded(client)
    await TraceEvent.filter(root_id=root, seq=4).update(
        erased_at=datetime.now(timezone.utc), summary="Erased.", summary_salt=None)

    check = await found(shop, task)

    assert (check["brokenAt"], check["reason"]) == (4, "ERASURE_UNRECEIPTED")


async def test_a_salt_that_is_not_hex_is_malformed_and_named(client):
    shop, task, root = await recorded(client)
    await TraceEvent.filter(root_id=root, seq=3).update(summary_salt="zz" * 16)

    check = await found(shop, task)

    assert (check["brokenAt"], check["reason"]) == (3, "MALFORMED") and "summarySalt" in check["problem"]
