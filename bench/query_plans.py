"""Writes docs/query-plans.md: the PostgreSQL plan of every statement some real reads send.

Run by hand: python -m bench.query_plans [--server postgres://postgres@127.0.0.1:5432]

On a fresh database it stores 20 shops' work: the shop that reads holds 40 trees of 250 tasks
(mixed agents, skills, statuses, sessions and requesters), every other shop one tree of 1,000 tasks.
It sends each GraphQL request through the ASGI app, keeps the statements the ORM connection sent
and their parameters, and asks PostgreSQL to EXPLAIN ANALYZE each one.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from tortoise import Tortoise
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection

from bench.common import fresh_database
from bench.tree_read import (
    CALL_COLUMNS,
    SERVER,
    TASK_COLUMNS,
    TENANT,
    Tree,
    fake_tree,
    nested_query,
    store,
)
from graph.app import create_app
from models.settings import load
from models.line_columns import INSERTED
from permissions.tokens import issue_token

DOC = Path(__file__).parent.parent / "docs" / "query-plans.md"
AGENTS = ("Estimator", "Scheduler", "Parts", "Quote", "Mailer")
PEOPLE = ("mia", "sam", "olga", "noor")
STATUSES = ("DONE", "DONE", "DONE", "FAILED", "STOPPED", "RUNNING")

INTRO = """# Query plans

What PostgreSQL does with the statements agentlog sends for some whole-tree reads and for every
`tasks` filter. Captured by `python -m bench.query_plans` (which rewrites this file) from a real run:
a fresh database holding 20 shops' work (about 29,000 tasks, 290,000 lines, 87,000 meter rows), the
reading shop with 40 trees of 250 tasks of mixed agents, skills, statuses, sessions and requesters.
Each request went through the ASGI app; each statement the ORM connection sent was then run again
under `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)` with its own parameters. Long column
lists and id lists are shortened with `…`.

The indexes at work:

| index | columns | serves |
|---|---|---|
| `agent_task_path_prefix` | `path text_pattern_ops` (migration 0002) | `subtree`, and every level of `children` read at once: one `LIKE 'path/%'` prefix match |
| `llm_call_task_path_prefix` | `task_path text_pattern_ops` (migration 0002) | all-in cost: one grouped aggregate over `LIKE 'path%'` |
| `idx_agent_task_tenant_…` (several) | `(tenant, agent \\| skill \\| status \\| requester_id \\| session, started_at, id)` (migration 0003) | each `tasks` filter, newest first, keyset on `(started_at, id)` |
| `agent_task_roots` | `(tenant, started_at, id) WHERE parent_id IS NULL` (migration 0003) | `tasks(filter: {rootsOnly: true})` |
| `(tenant, started_at, id)` | | `tasks` without a filter, `startedAfter` / `startedBefore` |
| `(task_id, seq)` on `trace_event` | | a level's lines, `trace` |
| `(tenant, parent_id, sequence)` | | `children` one level at a time, and a page of each task's children (`children(first:)`, ranked per parent) |
| `idx_agent_task_tenant_…` (three more) | `(tenant, entity_type \| entity_id \| workflow_run, started_at, id)` (migration 0006) | the `entityType`, `entityId` and `workflowRun` filters |
| `idx_llm_call_tenant_…` | `(tenant, model, task_id)` (migration 0006) | the `model` filter: the tasks with a meter row of that model, from the index alone |
| `agent_task_ended` | `(tenant, ended_at DESC NULLS LAST, id DESC)` (migration 0006) | `orderBy: ENDED_AT_DESC` |
| `llm_call_tenant_at`, `agent_task_failed_ended` | `(tenant, at)` with the summed columns; `(tenant, ended_at) WHERE status = 'FAILED'` (migration 0019) | `usage`: the meter and the failed tasks in a range of time |
| `task_words_words` | GIN over `task_words.words`, a task's about, trigger and outcome without positions, in a narrow table kept by a trigger (migration 0011) | `search` on a task's words: probed by task id as a page walks its order, and counted from this table alone for a search by a reader of the whole tenant |
| `trace_event_search_words` | GIN over a generated `tsvector` column (migration 0006) | `search` on line sentences |
| `(root_id, seq)` unique on `trace_event` | | `record(first, after)`: one range of the chain |

Pages are asked with `first: 4` so that the second page exists for every filter; the keyset
condition `(started_at < $t OR (started_at = $t AND id < $id))` bounds the index scan itself, so a
later page costs what the first does. `statusIn` and `agentIn` are served by the same indexes as
`status` and `agent`; `STARTED_AT_ASC` by `(tenant, started_at, id)` read forwards. The data below
is varied after it is stored: entity types, ids, workflow runs, a second model on some meter rows,
and a few words of `about`. When a `tasks` read asks for `totalCount`, the count is sent beside the
page on a second connection, so it may come first below.
"""

COLLATION = """
## Why `text_pattern_ops`

The same prefix match over a copy of `agent_task.path`, first with a plain b-tree index, then with a
`text_pattern_ops` one. The database's collation is `{collation}`, not `C`, so the plain index cannot
serve `LIKE 'prefix%'`:
"""


def shop_trees(rng: random.Random) -> list[Tree]:
    """The reading shop's 40 trees, with the columns a filter can pick varied."""
    at = {name: i for i, name in enumerate(TASK_COLUMNS)}
    begin = datetime.now(timezone.utc) - timedelta(days=60)
    trees = []
    for n in range(40):
        tree = fake_tree(250, TENANT, begin + timedelta(days=n))
        rows = []
        for row in tree.tasks:
            values = list(row)
            values[at["agent"]] = rng.choice(AGENTS)
            values[at["skill"]] = f"Skill{rng.randrange(10)}"
            values[at["status"]] = rng.choice(STATUSES)
            values[at["session"]] = f"chat-{n}"
            if values[at["parent_id"]] is None:
                values[at["requester_id"]] = PEOPLE[n % len(PEOPLE)]
            rows.append(tuple(values))
        tree.tasks = rows
        trees.append(tree)
    return trees


async def store_others(url: str, shops: int) -> None:
    conn = await asyncpg.connect(url)
    try:
        for n in range(shops):
            tree = fake_tree(1000, f"shop-{n}")
            await conn.copy_records_to_table("agent_task", records=tree.tasks, columns=TASK_COLUMNS)
            await conn.copy_records_to_table("trace_event", records=tree.lines, columns=INSERTED)
            await conn.copy_records_to_table("llm_call", records=tree.calls, columns=CALL_COLUMNS)
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


async def vary(url: str) -> None:
    """Gives the reading shop's tasks the values the newer filters pick between, then analyses again."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "UPDATE agent_task SET entity_type = (ARRAY['Repair', 'Invoice', 'Bike'])[1 + abs(hashtext(path)) % 3], "
            "entity_id = 'T-' || (abs(hashtext(id::text)) % 800), workflow_run = 'run-' || (abs(hashtext(root_id::text)) % 40), "
            "about = (ARRAY['Ticket T-7: rear brake', 'Front wheel true', 'Chain and cassette', 'Brake and wheel check'])"
            "[1 + abs(hashtext(id::text || 'a')) % 4] WHERE tenant = $1", TENANT)
        await conn.execute(
            "UPDATE llm_call SET model = 'Careful' WHERE tenant = $1 AND abs(hashtext(id::text)) % 20 = 0", TENANT)
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


def capture() -> list[tuple[str, list[Any]]]:
    """Wraps the connection's statement methods; the list fills with (sql, parameters)."""
    sent: list[tuple[str, list[Any]]] = []
    cls = type(get_connection("default"))
    for name in ("execute_query", "execute_query_dict"):
        original = getattr(cls, name)

        async def run(self: BaseDBAsyncClient, sql: str, values: list | None = None, _original: Any = original) -> Any:
            sent.append((sql, list(values or [])))
            return await _original(self, sql, values)

        setattr(cls, name, run)
    return sent


def shortened(text: str) -> str:
    text = re.sub(r'SELECT ("[a-z_]+"( "[a-z0-9_]+")?,\s*){4,}("[a-z_]+"( "[a-z0-9_]+")?|NULL)', "SELECT …", text)
    text = re.sub(r"SELECT (\"[a-z_]+\", |NULL, ){4,}(\"[a-z_]+\"|NULL)", "SELECT …", text)
    text = re.sub(r"'\{([0-9a-f-]{36},){2,}[^}]*\}'", "'{…}'", text)
    return re.sub(r"\(\$\d+(,\$\d+){3,}\)", "(…)", text)


async def explain(conn: asyncpg.Connection, sql: str, values: list[Any]) -> list[str]:
    rows = await conn.fetch("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + sql, *values)
    return [shortened(row[0]) for row in rows]


def reads(trees: list[Tree]) -> list[tuple[str, str, dict[str, Any], str]]:
    mia = issue_token("mia", TENANT, roles=["Mechanic"], name="Mia")
    noor = issue_token("noor", TENANT, roles=["Manager", "Auditor"], name="Noor")
    below = next(row[0] for row in trees[4].tasks if row[TASK_COLUMNS.index("depth")] == 2)
    page = ("query($f: TaskFilter, $after: String, $o: TaskOrder) { tasks(first: 4, filter: $f, after: $after, "
            "orderBy: $o) { totalCount edges { cursor node { id } } } }")
    found = [
        ("The benchmark's nested read of one tree (250 tasks): children five levels deep, each with status, "
         "cost.allInMicros and its trace's summary and kind", nested_query(), {"id": str(trees[0].root)}, mia),
        ("A task two levels down: its subtree, children and all-in cost",
         "query($id: ID!) { task(id: $id) { subtree { id } children { id } cost { allInMicros } } }",
         {"id": str(below)}, noor),
        ("A page of the record and of children three levels deep, with the counts to page against",
         "query($id: ID!) { task(id: $id) { chainLength childCount subtreeCount record(first: 100, after: 1000) { seq } "
         "children(first: 3) { id childCount children(first: 3) { id children(first: 3) { id } } } } }",
         {"id": str(trees[0].root)}, noor),
    ]
    filters: list[tuple[str, dict[str, Any]]] = [
        ("none", {}), ("agent", {"agent": "Quote"}), ("skill", {"skill": "Skill3"}), ("status", {"status": "FAILED"}),
        ("requester", {"requester": "sam"}), ("session", {"session": "chat-7"}), ("rootsOnly", {"rootsOnly": True}),
        ("startedAfter and startedBefore", {"startedAfter": (datetime.now(timezone.utc) - timedelta(days=30)).isoformat(),
                                            "startedBefore": (datetime.now(timezone.utc) - timedelta(days=20)).isoformat()}),
    ]
    filters += [
        ("entityType", {"entityType": "Invoice"}), ("entityId", {"entityId": "T-7"}),
        ("workflowRun", {"workflowRun": "run-3"}), ("model", {"model": "Careful"}),
        ("statusIn", {"statusIn": ["FAILED", "STOPPED"]}), ("agentIn", {"agentIn": ["Quote", "Mailer"]}),
        ("search", {"search": "brake wheel"}),
    ]
    found += [(f"`tasks` filtered by {label}, second page, with totalCount", page, {"f": flt}, noor)
              for label, flt in filters]
    found += [(f"`tasks` in order {order}, second page", page, {"f": {}, "o": order}, noor)
              for order in ("STARTED_AT_ASC", "ENDED_AT_DESC")]
    found.append(("`tasks` for a requester: what Mia asked for and what it led to, second page", page, {"f": {}}, mia))
    found.append(("`tasks` searched by a requester: only the trees she asked for, second page", page,
                  {"f": {"search": "brake"}}, mia))
    return found


async def run(server: str) -> str:
    rng = random.Random(7)
    out = [INTRO]
    async with fresh_database(server) as url:
        trees = shop_trees(rng)
        await store(url, trees[0])
        for tree in trees[1:]:
            await _copy(url, tree)
        await store_others(url, 19)
        await vary(url)
        sent = capture()
        conn = await asyncpg.connect(url)
        transport = httpx.ASGITransport(app=create_app(load(database_url=url)))
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://plans") as http:
                for label, query, variables, token in reads(trees):
                    headers = {"Authorization": f"Bearer {token}"}
                    if "tasks(" in query:
                        first = (await http.post("/graphql", json={"query": query, "variables": variables},
                                                 headers=headers)).json()
                        variables = {**variables, "after": first["data"]["tasks"]["edges"][-1]["cursor"]}
                    sent.clear()
                    body = (await http.post("/graphql", json={"query": query, "variables": variables},
                                            headers=headers)).json()
                    if body.get("errors"):
                        raise AssertionError(body["errors"])
                    out.append(f"\n## {label}\n")
                    for sql, values in list(sent):
                        plan = "\n".join(await explain(conn, sql, values))
                        out.append(f"```sql\n{shortened(sql)}\n```\n```\n{plan}\n```\n")
            out.append(await collation_check(conn, trees[0].root))
        finally:
            await conn.close()
            await Tortoise.close_connections()
    return "\n".join(out)


async def collation_check(conn: asyncpg.Connection, root: Any) -> str:
    collation = await conn.fetchval("SELECT datcollate FROM pg_database WHERE datname = current_database()")
    await conn.execute("CREATE TEMP TABLE paths AS SELECT path::text AS path FROM agent_task")
    await conn.execute("CREATE INDEX paths_plain ON paths (path)")
    await conn.execute("ANALYZE paths")
    sql = "SELECT path FROM paths WHERE path LIKE $1"
    text = [COLLATION.format(collation=collation)]
    for label in ("plain b-tree", "text_pattern_ops"):
        if label == "text_pattern_ops":
            await conn.execute("CREATE INDEX paths_pattern ON paths (path text_pattern_ops)")
        plan = "\n".join(await explain(conn, sql, [f"{root}/%"]))
        text.append(f"With a {label} index:\n```\n{plan}\n```\n")
    return "\n".join(text)


async def _copy(url: str, tree: Tree) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.copy_records_to_table("agent_task", records=tree.tasks, columns=TASK_COLUMNS)
        await conn.copy_records_to_table("trace_event", records=tree.lines, columns=INSERTED)
        await conn.copy_records_to_table("llm_call", records=tree.calls, columns=CALL_COLUMNS)
    finally:
        await conn.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=SERVER, help="a PostgreSQL server URL, without a database name")
    args = parser.parse_args()
    DOC.write_text(asyncio.run(run(args.server)), encoding="utf-8")
    print(f"wrote {DOC}")
