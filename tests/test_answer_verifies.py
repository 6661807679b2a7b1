"""What Ana and Carla answer for verifies like any other line: a reviewed, held and released tree is intact online
(`verifyTrace`) and offline (`agentlog verify --file`), and a changed REVIEWED line is named the same way by both."""

from __future__ import annotations

import orjson
from tortoise.connection import get_connection

from models import TraceEvent
from models.record.export_check import check_export
from tests.shop import Shop
from tests.test_export import agentlog, download, lines_of, published_key

POLICIES = "mutation($input: PoliciesInput!) { definePolicies(input: $input) { holdsRecords } }"
REVIEW = "mutation($input: ReviewInput!) { reviewTask(input: $input) { verdict } }"
HOLD = "mutation($input: HoldInput!) { holdWork(input: $input) { id } }"
RELEASE = "mutation($input: HoldInput!) { releaseHold(input: $input) { id } }"


async def answered(client) -> tuple[Shop, str]:
    """The estimate, approved by Ana, held by Carla over a complaint, and released once it was settled."""
    shop = Shop(client)
    await shop.setup()
    await client.ok(POLICIES, {"input": {"holdsRecords": ["Counsel"]}}, shop.kit)
    task = await shop.estimate()
    ana = shop.person("ana", "Auditor", name="Ana Auditor")
    carla = shop.person("carla", "Counsel", name="Carla")
    await client.ok(REVIEW, {"input": {"task": task, "verdict": "APPROVED", "score": 1}}, ana)
    await client.ok(HOLD, {"input": {"task": task, "reason": "Mia's complaint is open."}}, carla)
    await client.ok(RELEASE, {"input": {"task": task, "reason": "The complaint was settled."}}, carla)
    return shop, task


async def test_a_reviewed_held_and_released_tree_verifies_online_and_offline(client, database, tmp_path):
    shop, task = await answered(client)
    out, key = tmp_path / "export.jsonl", tmp_path / "key.txt"
    key.write_text(await published_key(shop))

    online = await shop.check(task)
    out.write_bytes((await download(shop, task, shop.noor)).content)
    offline = agentlog("verify", "--file", str(out), "--key", str(key), "--json", database="sqlite:///nowhere/x.db")

    assert (online["intact"], online["lines"]) == (True, 12)
    kinds = [orjson.loads(line)["kind"] for line in out.read_bytes().splitlines()[1:]]
    assert kinds[-4:] == ["ENDED", "REVIEWED", "HELD", "RELEASED"]
    verdict = orjson.loads(offline.stdout)
    assert (offline.returncode, verdict["intact"], verdict["signatureChecked"]) == (0, True, True)


async def test_a_changed_review_is_found_at_its_line_online_and_offline(client):
    shop, task = await answered(client)
    line = await TraceEvent.get(root_id=task, kind="REVIEWED")
    conn = get_connection("default")
    await conn.execute_query("UPDATE trace_event SET summary = 'Ana Auditor (ana) rejected this work.' WHERE id = "
                             f"{line.id}")

    online = await shop.check(task)
    offline = check_export(lines_of(await download(shop, task, shop.noor)))

    assert (online["brokenAt"], online["reason"]) == (line.seq, "SUMMARY_HASH")
    assert (offline.seq, offline.reason) == (line.seq, "SUMMARY_HASH")
