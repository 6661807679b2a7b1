"""A person who asked for 10,000 separate sub-tasks lists them, on SQLite as on PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from tortoise import connections

from models import AgentTask
from tests.shop import Shop

PAGE = """query($after: String) { tasks(first: 500, after: $after) {
  totalCount edges { node { id about } } pageInfo { hasNextPage endCursor } } }"""
ASKED = 10_000


async def asked_sub_tasks(shop: Shop, root: dict, count: int) -> set[str]:
    """Sub-tasks of `root` asked for by Mia, written straight to the table as the kit would over months, and
    the table's statistics brought up to date as PostgreSQL's autovacuum would have done meanwhile."""
    start = datetime.now(timezone.utc)
    rows = []
    for n in range(count):
        tid = uuid.uuid4()
        rows.append(AgentTask(
            id=tid, tenant=shop.tenant, agent="Estimator", skill="EstimateRepair", cause="SPAWN",
            about=f"Part {n}", requester_id="mia", actor_id="estimator", status="DONE",
            started_at=start + timedelta(microseconds=n), ended_at=start + timedelta(microseconds=n),
            parent_id=uuid.UUID(root["id"]), root_id=uuid.UUID(root["id"]), depth=1, sequence=n + 1,
            path=f"{root['id']}/{tid}",
        ))
    await AgentTask.bulk_create(rows, batch_size=1000)
    conn = connections.get("default")
    if conn.capabilities.dialect == "postgres":
        await conn.execute_script("ANALYZE agent_task")
    return {str(row.id) for row in rows}


async def test_a_requester_of_ten_thousand_separate_sub_tasks_pages_through_all_of_them(client):
    shop = Shop(client)
    await shop.setup()
    root = await shop.start(requester={"id": "sam", "name": "Sam"}, about="The whole fleet")
    asked = await asked_sub_tasks(shop, root, ASKED)

    seen, totals, after = [], set(), None
    while True:
        tasks = (await client.ok(PAGE, {"after": after}, shop.mia))["tasks"]
        seen += [edge["node"]["id"] for edge in tasks["edges"]]
        totals.add(tasks["totalCount"])
        if not tasks["pageInfo"]["hasNextPage"]:
            break
        after = tasks["pageInfo"]["endCursor"]

    assert len(seen) == ASKED and set(seen) == asked
    assert totals == {ASKED}
    assert root["id"] not in seen
